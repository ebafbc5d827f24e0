#include "jobs/parity_side.h"

#include <fmt/format.h>

#include <chrono>

#include "jobs/channel.h"
#include "jobs/parity_protocol.h"
#include "jobs/worker_rung.h"
#include "session/session.h"
#include "session/tensor_file.h"

namespace rung {
namespace {

int serve(const ParityJob& job, ChannelToParent& channel) {
  auto refuse = [&](const char* stage, const std::string& error) {
    channel.send({{"ready", false}, {"stage", stage}, {"error", error}});
    return 1;
  };
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return refuse("runtime", build.error().message);
  auto process = OrtProcess::install(*build);
  if (!process) return refuse("runtime", process.error().message);
  auto rung = resolve_rung(**process, job.rung);
  if (!rung) return refuse("rung", rung.error().message);
  SessionSettings settings;
  settings.rung = *rung;
  settings.intra_op_threads = job.threads;
  settings.provider.extra = job.provider_options;
  auto session = open_session(**process, job.model, settings);
  if (!session) return refuse("build", session.error().message);
  auto prepared = prepare_session(std::move(*session));
  if (!prepared) return refuse("build", prepared.error().message);
  const ModelIo& io = prepared->io;
  if (!channel.send({{"ready", true}, {"version", build->version}, {"api", build->api_version}, {"rung", rung->display},
                     {"io", model_io_to_json(io)}})) {
    return 1;
  }
  for (std::string line; channel.receive(line);) {
    std::size_t index = 0;
    std::filesystem::path dir;
    try {
      const auto j = nlohmann::json::parse(line);
      index = j.at("run");
      dir = j.at("inputs").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      channel.send({{"done", nullptr}, {"error", fmt::format("malformed request: {}", e.what())}});
      return 2;
    }
    auto fail = [&](const std::string& error) { return channel.send({{"done", index}, {"error", error}}); };
    // Each input as the model declares it: a tensor, a sequence, an optional value.
    std::vector<Value> inputs;
    std::string problem;
    for (std::size_t k = 0; k < io.inputs.size() && problem.empty(); ++k) {
      auto v = read_value_file(dir / fmt::format("input_{}.pb", k), io.inputs[k].kind());
      if (!v) {
        problem = v.error().message;
      } else {
        v->name = io.inputs[k].name;
        if (v->kind == Value::Kind::kTensor) v->tensor.name = v->name;
        inputs.push_back(std::move(*v));
      }
    }
    if (!problem.empty()) {
      if (!fail(problem)) return 1;
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto outputs = run_session_values(*prepared, inputs);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!outputs) {
      if (!fail(outputs.error().message)) return 1;
      continue;
    }
    const auto out_dir = job.outputs_dir / std::to_string(index);
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    for (std::size_t k = 0; k < outputs->size() && problem.empty(); ++k) {
      if (auto s = write_value_file((*outputs)[k], out_dir / fmt::format("output_{}.pb", k)); !s) problem = s.error().message;
    }
    if (!(problem.empty() ? channel.send({{"done", index}, {"ms", ms}}) : fail(problem))) return 1;
  }
  return 0;
}

}  // namespace

int parity_worker_main(int argc, char** argv) {
  return socket_worker_main<ParityJob>(
      argc, argv, "rung-probe-worker parity JOB.json (started by `rung parity`, which holds the other end of its socket)",
      parity_job_from_json, serve);
}

}  // namespace rung
