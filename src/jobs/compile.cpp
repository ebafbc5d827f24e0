#include "jobs/compile.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "jobs/measure.h"
#include "os/atomic_file.h"
#include "os/read_file.h"
#include "session/session.h"

namespace rung {
namespace {

// The compile API arrived in API 22.
constexpr int kCompileApiVersion = 22;

CompileResult compile(const CompileJob& job) {
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return {false, build.error().message, 0};
  auto process = OrtProcess::install(*build);
  if (!process) return {false, process.error().message, 0};
  try {
    if (job.rung.append == AppendMethod::kNone) {
      // The CPU rung compiles nothing; ONNX Runtime saves its optimised graph in its own format.
      SessionSettings settings;
      settings.rung = job.rung;
      settings.optimized_model_path = job.output;
      auto session = open_session(**process, job.model, settings);
      if (!session) return {false, session.error().message, 0};
      return {true, {}, 0};
    }
    if (build->api_version < kCompileApiVersion) {
      return {false, fmt::format("ONNX Runtime {} serves API {}; compiling engines needs {}", build->version, build->api_version,
                                 kCompileApiVersion),
              0};
    }
    Ort::SessionOptions options;
    ProviderSettings provider;
    provider.fp16 = job.fp16;
    provider.engine_cache_dir = job.provider_cache_dir;
    provider.trt_workspace_bytes = job.tensorrt_workspace_bytes;
    if (auto s = append_provider(options, **process, job.rung, provider); !s) return {false, s.error().message, 0};
    Ort::ModelCompilationOptions co((*process)->env(), options);
    co.SetInputModelPath(job.model.c_str());
    co.SetOutputModelPath(job.output.c_str());
    co.SetEpContextEmbedMode(true);
    Ort::Status status = Ort::CompileModel((*process)->env(), co);
    if (!status.IsOK()) return {false, status.GetErrorMessage(), 0};
    return {true, {}, 0};
  } catch (const Ort::Exception& e) {
    return {false, e.what(), 0};
  }
}

}  // namespace

CompileResult run_compile_job(const CompileJob& job) {
  auto t0 = std::chrono::steady_clock::now();
  CompileResult r = compile(job);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r.ok) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(job.output, ec)) {
      r.ok = false;
      r.error = fmt::format("{} compiled without error but wrote no {}", job.rung.display, job.output.string());
    }
  }
  return r;
}

std::string compile_job_to_json(const CompileJob& job) {
  nlohmann::json j = {{"runtime_library", job.runtime_library.string()},
                      {"allow_writable_runtime", job.allow_writable_runtime},
                      {"model", job.model.string()},
                      {"output", job.output.string()},
                      {"rung", nlohmann::json::parse(rung_to_json(job.rung))},
                      {"fp16", job.fp16},
                      {"provider_cache_dir", job.provider_cache_dir.string()},
                      {"tensorrt_workspace_bytes", job.tensorrt_workspace_bytes}};
  return j.dump(2);
}

int compile_worker_main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: rung-probe-worker compile JOB.json\n");
    return 2;
  }
  std::filesystem::path job_file = argv[1];
  CompileResult r;
  try {
    auto j = nlohmann::json::parse(read_text_file(job_file));
    auto rung = rung_from_json(j.at("rung").dump());
    if (!rung) throw std::runtime_error(rung.error().message);
    CompileJob job;
    job.runtime_library = j.at("runtime_library").get<std::string>();
    job.allow_writable_runtime = j.at("allow_writable_runtime");
    job.model = j.at("model").get<std::string>();
    job.output = j.at("output").get<std::string>();
    job.rung = *rung;
    job.fp16 = j.at("fp16");
    job.provider_cache_dir = j.at("provider_cache_dir").get<std::string>();
    job.tensorrt_workspace_bytes = j.at("tensorrt_workspace_bytes");
    r = run_compile_job(job);
  } catch (const std::exception& e) {
    r.error = fmt::format("malformed compile job {}: {}", job_file.string(), e.what());
  }
  nlohmann::json out = {{"ok", r.ok}, {"error", r.error}, {"ms", r.ms}};
  return write_file_atomically(job_file.parent_path() / "result.json", out.dump(2)) ? 0 : 1;
}

}  // namespace rung
