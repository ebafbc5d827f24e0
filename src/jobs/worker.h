// The worker executable's side of a job (see jobs/runner.h for the parent's):
// `rung-probe-worker KIND JOB.json [--channel=FD]` looks KIND up in one table,
// runs its entry on the job and writes the result beside the job as result.json.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "os/line_channel.h"

namespace rung {

struct JobKind {
  std::string_view name;
  // Runs the job; returns its result, {"ok": true, ...} or {"ok": false, "error": ..., ...}.
  // `channel` is set when the parent started the job with one. May throw
  // nlohmann::json::exception on a malformed job.
  nlohmann::json (*run)(const nlohmann::json& job, LineChannel* channel);
};

// The worker's main: `KIND JOB.json [--channel=FD] [--parent=PID]`. With
// --parent (the runner always gives it) the worker is tied to that process
// (PR_SET_PDEATHSIG) and does not start when its parent is already another one,
// so no worker outlives the rung process that started it. Exit code 0 when
// result.json was written, 1 when it could not be, 2 for a bad command line, 3
// when the parent was gone, kWorkerOutOfMemory when an allocation failed under
// --memory-limit-mb.
inline constexpr int kWorkerOutOfMemory = 86;

// A job's result when it failed: {"ok": false, "error": error}.
nlohmann::json failed_result(const std::string& error);

int worker_main(int argc, char** argv, std::span<const JobKind> kinds);

}  // namespace rung
