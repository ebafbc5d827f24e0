// The one way rung runs a job in a child process: the worker executable
// (rung-probe-worker KIND JOB.json) with a job description, a deadline and a
// work directory, and one outcome: ok with the job's result, failed with a
// reason, crashed with the signal, or timed out at the deadline. Probe, bench,
// engine compiles and parity describe a child's failure in the same words,
// because they all get them from JobOutcome::describe().
//
// In the work directory: job.json (what the runner writes), worker.log (the
// worker's stdout and stderr), result.json (what the worker writes; a JSON
// object with "ok" and, when not ok, "error").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "os/line_channel.h"
#include "os/child_process.h"
#include "rung/limits.h"
#include "rung/result.h"

namespace rung {

struct JobOutcome {
  enum class Status { kOk, kFailed, kCrashed, kTimedOut, kCancelled };
  Status status = Status::kFailed;
  nlohmann::json result;               // the job's result.json when it wrote one (ok, or failed in its own words)
  std::string reason;                  // kFailed: why
  int signal = 0;                      // kCrashed: the signal that ended the worker
  std::chrono::milliseconds deadline{0};  // kTimedOut: the deadline it missed
  std::string log_line;                // the last line of worker.log, when the worker ended without its own words
  double elapsed_ms = 0;               // the worker's time, up to its end or its kill
  std::optional<int> exit_status;      // kFailed: the status of a worker that exited without a result
  std::uint64_t out_of_memory_mb = 0;  // kCrashed: the worker ran out of memory under this limit (MiB)

  bool ok() const { return status == Status::kOk; }
  // The worker ended without its answer: killed by a signal, at the deadline, or
  // exited with no result. Not one that answered "failed", nor one never started.
  bool died() const { return status == Status::kCrashed || status == Status::kTimedOut || exit_status.has_value(); }
  // One line, the same in every command: the job's own error when it reported
  // one; "the worker was killed by SIGABRT", "the worker gave no answer within
  // 60 s and was killed", "the worker exited with status 1 and no result",
  // "the worker ran out of memory: the job reached its limit of 1024 MiB",
  // "the worker was stopped: its caller is quitting"
  // (each followed by "; its log ends: LINE" when the log says something).
  std::string describe() const;

  // A job's own result: ok when it says "ok": true, else failed with its "error".
  static JobOutcome finished(nlohmann::json result);
  static JobOutcome failed(std::string reason);
  static JobOutcome cancelled();
};

struct JobRequest {
  std::string kind;                    // an entry of the worker's table: "probe", "bench", "compile", "parity", "conform"
  nlohmann::json job;                  // the job description the entry reads
  std::chrono::milliseconds deadline{60'000};  // run(): for the whole job; start(): for each answer
  std::filesystem::path work_dir;      // created if missing; job.json, worker.log and result.json live here
  std::function<void()> on_wait;       // run(): called about every 200 ms while the job runs, from the caller's thread
  // run(): when set (an engine being freed), the worker is killed within some 20 ms and the
  // outcome is kCancelled, which is no evidence about the job: neither a verdict nor a death.
  const std::atomic<bool>* cancel = nullptr;
  // The most data the worker may hold, in MiB (os/this_process.h): a provider that
  // allocates without end ends its worker ("ran out of memory"), not the machine.
  // kWorkerMemoryDefault: half the machine's memory (rung/limits.h); 0: no limit.
  std::uint64_t memory_limit_mb = kWorkerMemoryDefault;
};

class StartedJob;

class JobRunner {
 public:
  explicit JobRunner(std::filesystem::path worker) : worker_(std::move(worker)) {}
  const std::filesystem::path& worker() const { return worker_; }

  // Runs the job to its end. Never throws.
  JobOutcome run(const JobRequest& request) const;

  // Starts a job that answers over a channel (one line at a time), for work
  // fed piece by piece. A failure to start is the outcome saying why.
  Result<std::unique_ptr<StartedJob>> start(const JobRequest& request) const;

 private:
  std::filesystem::path worker_;
};

// A running job with a channel to it. Destroying it kills a worker still running.
class StartedJob {
 public:
  StartedJob(const StartedJob&) = delete;
  StartedJob& operator=(const StartedJob&) = delete;

  // An Error carries the outcome's describe() when the worker is gone.
  Status send(const std::string& line);
  // The next line from the worker, within the request's deadline; at the
  // deadline the worker is killed and the error says it timed out.
  Result<std::string> receive();
  // Closes the channel and waits up to `grace` for the worker to end.
  JobOutcome finish(std::chrono::milliseconds grace);

  // How the job ended, once it has (after an error from send or receive, or finish).
  const std::optional<JobOutcome>& outcome() const { return outcome_; }

 private:
  friend class JobRunner;
  StartedJob(ChildProcess child, int fd, JobRequest request) : child_(std::move(child)), channel_(fd), request_(std::move(request)) {}
  const JobOutcome& ended(ChildExit exit, std::chrono::milliseconds deadline);
  const JobOutcome& wait_for_end();  // after the channel closed: waits up to the deadline for the worker to end

  ChildProcess child_;
  LineChannel channel_;
  JobRequest request_;
  std::optional<JobOutcome> outcome_;
};

}  // namespace rung
