#include "jobs/conform_worker.h"

#include <fmt/format.h>

#include "jobs/channel.h"
#include "jobs/worker_rung.h"
#include "runtime/clean_error.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// The provider must attach before any test runs: a rung that cannot start at all
// (no adapter, a provider library missing) is the rung's failure, not each test's.
Status attach_check(OrtProcess& process, const RungSpec& rung, const ConformJob& job) {
  try {
    Ort::SessionOptions options;
    ProviderSettings settings;
    settings.extra = job.provider_options;
    return append_provider(options, process, rung, settings);
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

int serve(const ConformJob& job, ChannelToParent& channel) {
  auto refuse = [&](const char* stage, const std::string& error) {
    channel.send(nlohmann::json{{"ready", false}, {"stage", stage}, {"error", clean_error(error)}});
    return 1;
  };
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return refuse("runtime", build.error().message);
  auto process = OrtProcess::install(*build);
  if (!process) return refuse("runtime", process.error().message);
  auto rung = resolve_rung(**process, job.rung);
  if (!rung) return refuse("rung", rung.error().message);
  if (auto s = attach_check(**process, *rung, job); !s) return refuse("rung", s.error().message);
  if (!channel.send(nlohmann::json{{"ready", true}, {"version", build->version}, {"rung", rung->display}, {"provider", rung->provider}})) return 1;

  ConformCaseSettings settings;
  settings.rung = *rung;
  settings.threads = job.threads;
  settings.provider_options = job.provider_options;
  settings.tolerance = job.tolerance;
  settings.profile_dir = job.work_dir;
  for (std::string line; channel.receive(line);) {
    std::size_t index = 0;
    fs::path dir;
    try {
      const auto j = nlohmann::json::parse(line);
      index = j.at("test");
      dir = j.at("dir").get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      channel.send(nlohmann::json{{"done", nullptr}, {"error", fmt::format("malformed request: {}", e.what())}});
      return 2;
    }
    const ConformCaseResult r = run_conform_case(**process, settings, dir);
    if (!channel.send(nlohmann::json{{"done", index}, {"result", conform_result_to_json(r)}})) return 1;
  }
  return 0;
}

}  // namespace

std::string conform_job_to_json(const ConformJob& job) {
  return nlohmann::json{{"runtime_library", job.runtime_library.string()},
                        {"allow_writable_runtime", job.allow_writable_runtime},
                        {"rung", job.rung},
                        {"threads", job.threads},
                        {"provider_options", job.provider_options},
                        {"tolerance", {{"atol", job.tolerance.atol}, {"rtol", job.tolerance.rtol}, {"nan_equal", job.tolerance.nan_equal}}},
                        {"work_dir", job.work_dir.string()},
                        {"channel_fd", job.channel_fd}}
      .dump(2);
}

Result<ConformJob> conform_job_from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    ConformJob job;
    job.runtime_library = j.at("runtime_library").get<std::string>();
    job.allow_writable_runtime = j.at("allow_writable_runtime");
    job.rung = j.at("rung");
    job.threads = j.at("threads");
    job.provider_options = j.at("provider_options").get<std::map<std::string, std::string>>();
    job.tolerance.atol = j.at("tolerance").at("atol");
    job.tolerance.rtol = j.at("tolerance").at("rtol");
    job.tolerance.nan_equal = j.at("tolerance").at("nan_equal");
    job.work_dir = j.at("work_dir").get<std::string>();
    job.channel_fd = j.at("channel_fd");
    return job;
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("malformed conform job: {}", e.what())};
  }
}

nlohmann::json conform_result_to_json(const ConformCaseResult& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [p, n] : r.nodes_by_provider) nodes.push_back({{"provider", p}, {"nodes", n}});
  return {{"outcome", conform_outcome_name(r.outcome)}, {"reason", r.reason}, {"max_abs", r.max_abs}, {"max_rel", r.max_rel},
          {"data_sets", r.data_sets}, {"ms", r.ms}, {"placement", nodes}};
}

ConformCaseResult conform_result_from_json(const nlohmann::json& j) {
  ConformCaseResult r;
  r.outcome = conform_outcome_from_name(j.at("outcome"));
  r.reason = j.at("reason");
  r.max_abs = j.at("max_abs");
  r.max_rel = j.at("max_rel");
  r.data_sets = j.at("data_sets");
  r.ms = j.at("ms");
  for (const auto& n : j.at("placement")) r.nodes_by_provider.emplace_back(n.at("provider"), n.at("nodes"));
  return r;
}

int conform_worker_main(int argc, char** argv) {
  return socket_worker_main<ConformJob>(
      argc, argv, "rung-probe-worker conform JOB.json (started by `rung conform`, which holds the other end of its socket)",
      conform_job_from_json, serve);
}

}  // namespace rung
