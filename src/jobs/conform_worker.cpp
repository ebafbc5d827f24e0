#include "jobs/conform_worker.h"

#include <fmt/format.h>

#include "jobs/target_session.h"
#include "jobs/worker.h"
#include "jobs/worker_rung.h"
#include "rung/json_text.h"
#include "runtime/clean_error.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {


// The provider must attach before any test runs: a rung that cannot start at all
// (no adapter, a provider library missing) is the rung's failure, not each test's.
Status attach_check(OrtProcess& process, const RungSpec& rung, const JobTarget& target) {
  try {
    Ort::SessionOptions options;
    return append_provider(options, process, rung, session_settings(target).provider);
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

// Loads the build and the rung and says so to the parent: the job completed with
// its rung, or why the rung cannot start.
Result<ConformJob> open_column(const ConformJob& job, LineChannel& channel, OrtProcess*& process) {
  auto refuse = [&](const char* stage, const std::string& error) -> Error {
    channel.send(json_text(nlohmann::json{{"ready", false}, {"stage", stage}, {"error", clean_error(error)}}));
    return Error{ErrorCode::kRuntime, clean_error(error)};
  };
  auto installed = install_runtime(job.target);
  if (!installed) return refuse("runtime", installed.error().message);
  process = *installed;
  auto rung = resolve_rung(*process, job.target.rung);
  if (!rung) return refuse("rung", rung.error().message);
  if (auto s = attach_check(*process, *rung, job.target); !s) return refuse("rung", s.error().message);
  if (!channel.send(json_text(nlohmann::json{{"ready", true}, {"version", process->build().version}, {"rung", rung->display},
                                   {"provider", rung->provider}}))) {
    return Error{ErrorCode::kIo, "the parent closed the channel"};
  }
  ConformJob resolved = job;
  resolved.target.rung = *rung;
  return resolved;
}

}  // namespace

void to_json(nlohmann::json& j, const ConformCaseResult& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [p, n] : r.nodes_by_provider) nodes.push_back({{"provider", p}, {"nodes", n}});
  j = {{"outcome", conform_outcome_name(r.outcome)}, {"reason", r.reason}, {"max_abs", r.max_abs}, {"max_rel", r.max_rel},
       {"data_sets", r.data_sets}, {"ms", r.ms}, {"placement", nodes}};
}

void from_json(const nlohmann::json& j, ConformCaseResult& r) {
  r.outcome = conform_outcome_from_name(j.at("outcome"));
  r.reason = j.at("reason");
  read_json(j.at("max_abs"), r.max_abs);
  read_json(j.at("max_rel"), r.max_rel);
  read_json(j.at("data_sets"), r.data_sets);
  read_json(j.at("ms"), r.ms);
  r.nodes_by_provider.clear();
  for (const auto& n : j.at("placement")) read_json(n.at("nodes"), r.nodes_by_provider.emplace_back(n.at("provider"), 0).second);
}

nlohmann::json conform_job_entry(const nlohmann::json& j, LineChannel* channel) {
  if (channel == nullptr) return failed_result("a conform job answers over a channel; none was given");
  const ConformJob job = j.get<ConformJob>();
  OrtProcess* process = nullptr;
  auto resolved = open_column(job, *channel, process);
  if (!resolved) return failed_result(resolved.error().message);
  for (std::string line; channel->receive(line) == LineChannel::Read::kLine;) {
    std::size_t index = 0;
    fs::path dir;
    std::string error;
    if (auto request = parse_json(line); !request) {
      error = request.error().message;
    } else {
      try {
        read_json(request->at("test"), index);
        read_json(request->at("dir"), dir);  // text, or path_bytes when not UTF-8
      } catch (const nlohmann::json::exception& e) {
        error = e.what();
      }
    }
    if (!error.empty()) {
      error = fmt::format("malformed request: {}", error);
      channel->send(json_text(nlohmann::json{{"done", nullptr}, {"error", error}}));
      return failed_result(error);
    }
    const ConformCaseResult r = run_conform_case(*process, *resolved, dir);
    if (!channel->send(json_text(nlohmann::json{{"done", index}, {"result", r}}))) return failed_result("the parent closed the channel");
  }
  return {{"ok", true}};
}

}  // namespace rung
