#include "jobs/measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/sample_stats.h"
#include "os/atomic_file.h"
#include "os/read_file.h"
#include "runtime/clean_error.h"
#include "session/inputs.h"
#include "session/session.h"
#include "session/tensor_file.h"

namespace rung {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

nlohmann::json rung_json(const RungSpec& r) {
  return {{"name", r.name},
          {"display", r.display},
          {"provider", r.provider},
          {"append", static_cast<int>(r.append)},
          {"form", static_cast<int>(r.form)},
          {"compiles_engines", r.compiles_engines},
          {"provider_libraries", r.provider_libraries},
          {"plugin_library", r.plugin_library}};
}

RungSpec rung_of(const nlohmann::json& j) {
  RungSpec r;
  r.name = j.at("name");
  r.display = j.at("display");
  r.provider = j.at("provider");
  r.append = static_cast<AppendMethod>(j.at("append").get<int>());
  r.form = static_cast<ModelForm>(j.at("form").get<int>());
  r.compiles_engines = j.at("compiles_engines");
  r.provider_libraries = j.at("provider_libraries").get<std::vector<std::string>>();
  r.plugin_library = j.at("plugin_library");
  return r;
}

}  // namespace

std::string rung_to_json(const RungSpec& rung) { return rung_json(rung).dump(); }

Result<RungSpec> rung_from_json(const std::string& text) {
  try {
    return rung_of(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, e.what()};
  }
}

std::string job_to_json(const ProbeJob& job) {
  nlohmann::json j = {{"runtime_library", job.runtime_library.string()},
                      {"allow_writable_runtime", job.allow_writable_runtime},
                      {"model_name", job.model_name},
                      {"model", job.model.string()},
                      {"inputs", nlohmann::json::parse(job.inputs.canonical())},
                      {"rung", rung_json(job.rung)},
                      {"runs", job.runs},
                      {"threads", job.threads},
                      {"seed", job.seed},
                      {"outputs_dir", job.outputs_dir.string()}};
  return j.dump(2);
}

Result<ProbeJob> job_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    ProbeJob job;
    job.runtime_library = j.at("runtime_library").get<std::string>();
    job.allow_writable_runtime = j.at("allow_writable_runtime");
    job.model_name = j.at("model_name");
    job.model = j.at("model").get<std::string>();
    const auto& in = j.at("inputs");
    job.inputs.dims = in.at("dims").get<std::map<std::string, std::int64_t>>();
    job.inputs.values = in.at("values").get<std::map<std::string, std::vector<double>>>();
    job.inputs.tensors_dir = in.at("tensors").get<std::string>();
    job.rung = rung_of(j.at("rung"));
    job.runs = j.at("runs");
    job.threads = j.at("threads");
    job.seed = j.at("seed");
    job.outputs_dir = j.at("outputs_dir").get<std::string>();
    return job;
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("malformed probe job: {}", e.what())};
  }
}

std::string result_to_json(const ProbeJobResult& r) {
  nlohmann::json j = {{"ok", r.ok},          {"stage", r.stage},       {"error", r.error},   {"inputs", r.inputs_described},
                      {"build_ms", r.build_ms}, {"first_run_ms", r.first_run_ms}, {"run_ms", r.run_ms}, {"median_ms", r.median_ms}};
  return j.dump(2);
}

Result<ProbeJobResult> result_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    ProbeJobResult r;
    r.ok = j.at("ok");
    r.stage = j.at("stage");
    r.error = j.at("error");
    r.inputs_described = j.at("inputs");
    r.build_ms = j.at("build_ms");
    r.first_run_ms = j.at("first_run_ms");
    r.run_ms = j.at("run_ms").get<std::vector<double>>();
    r.median_ms = j.at("median_ms");
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("malformed probe result: {}", e.what())};
  }
}

ProbeJobResult run_probe_job(const ProbeJob& job) {
  ProbeJobResult r;
  auto fail = [&](const char* stage, const std::string& error) {
    r.ok = false;
    r.stage = stage;
    r.error = clean_error(error);
    return r;
  };
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return fail("runtime", build.error().message);
  auto process = OrtProcess::install(*build);
  if (!process) return fail("runtime", process.error().message);

  SessionSettings settings;
  settings.rung = job.rung;
  settings.intra_op_threads = job.threads;
  auto t0 = Clock::now();
  auto session = open_session(**process, job.model, settings);
  r.build_ms = ms_since(t0);
  if (!session) return fail("build", session.error().message);

  auto inputs = make_inputs(describe_session(*session), job.inputs, job.seed);
  if (!inputs) return fail("inputs", inputs.error().message);
  r.inputs_described = describe_inputs(*inputs, job.inputs);

  t0 = Clock::now();
  auto outputs = run_session(*session, *inputs);
  r.first_run_ms = ms_since(t0);
  if (!outputs) return fail("run", outputs.error().message);
  for (int i = 0; i < job.runs; ++i) {
    t0 = Clock::now();
    auto again = run_session(*session, *inputs);
    r.run_ms.push_back(ms_since(t0));
    if (!again) return fail("run", again.error().message);
  }
  r.median_ms = r.run_ms.empty() ? r.first_run_ms : median(r.run_ms);
  if (!job.outputs_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(job.outputs_dir, ec);
    for (std::size_t i = 0; i < outputs->size(); ++i) {
      if (auto s = write_tensor_file((*outputs)[i], job.outputs_dir / fmt::format("output_{}.pb", i)); !s) {
        return fail("run", s.error().message);
      }
    }
  }
  r.ok = true;
  return r;
}

int probe_worker_main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} JOB.json (started by rung's probe; writes result.json beside the job)\n", argc > 0 ? argv[0] : "rung-probe-worker");
    return 2;
  }
  std::filesystem::path job_file = argv[1];
  auto job = job_from_json(read_text_file(job_file));
  ProbeJobResult result;
  if (!job) {
    result.stage = "job";
    result.error = job.error().message;
  } else {
    result = run_probe_job(*job);
  }
  if (auto s = write_file_atomically(job_file.parent_path() / "result.json", result_to_json(result)); !s) {
    fmt::print(stderr, "{}\n", s.error().message);
    return 1;
  }
  return 0;
}

}  // namespace rung
