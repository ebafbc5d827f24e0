#include "jobs/runner.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "jobs/worker.h"
#include "os/atomic_file.h"
#include "os/json_input.h"
#include "os/machine.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "os/termination.h"
#include "os/this_process.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto p = text.rfind('\n');
  return p == std::string::npos ? text : text.substr(p + 1);
}

// How a worker that ended without (or before) its result ended.
JobOutcome outcome_of_exit(const ChildExit& exit, std::chrono::milliseconds deadline, const fs::path& work_dir, std::uint64_t memory_limit_mb) {
  JobOutcome out;
  if (exit.timed_out) {
    out.status = JobOutcome::Status::kTimedOut;
    out.deadline = deadline;
  } else if (exit.exit_code == kWorkerOutOfMemory && memory_limit_mb > 0) {
    out.status = JobOutcome::Status::kCrashed;
    out.out_of_memory_mb = memory_limit_mb;
  } else if (exit.signal != 0) {
    out.status = JobOutcome::Status::kCrashed;
    out.signal = exit.signal;
  } else {
    out.status = JobOutcome::Status::kFailed;
    out.reason = fmt::format("the worker exited with status {} and no result", exit.exit_code);
    out.exit_status = exit.exit_code;
  }
  out.log_line = last_line(read_file_tail(work_dir / "worker.log", 64 << 10));
  out.elapsed_ms = exit.elapsed_ms;
  return out;
}

// The result the worker wrote, when it exited of itself and wrote one.
JobOutcome outcome_of(const ChildExit& exit, std::chrono::milliseconds deadline, const fs::path& work_dir, std::uint64_t memory_limit_mb) {
  if (!exit.timed_out && exit.signal == 0) {
    auto result = parse_json_or_discarded(read_input_file_if_usable(work_dir / "result.json", FileKind::kDocument).value_or(""));
    if (result.is_object()) {
      JobOutcome out = JobOutcome::finished(std::move(result));
      out.elapsed_ms = exit.elapsed_ms;
      return out;
    }
  }
  return outcome_of_exit(exit, deadline, work_dir, memory_limit_mb);
}

// The limit the worker runs under, in MiB (0: none). The default is none where no limit can be enforced
// (Windows, so far): a figure the worker only reports as unenforced would be passed for a bound.
std::uint64_t memory_limit_of(const JobRequest& request) {
  if (request.memory_limit_mb == kWorkerMemoryDefault && !process_data_limit_enforced()) return 0;
  return worker_memory_limit_mib(request.memory_limit_mb, physical_memory_mib());
}

std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:g} s", static_cast<double>(ms.count()) / 1000); }

// Writes job.json in a fresh work directory (an old result must not pass for a new one).
Status prepare(const JobRequest& request) {
  std::error_code ec;
  create_directories_unless_ending(request.work_dir, ec);
  fs::remove(request.work_dir / "result.json", ec);
  return write_file_atomically(request.work_dir / "job.json", json_text(request.job, 2));
}

std::string not_started(const fs::path& worker, const Error& error) {
  return fmt::format("the worker {} could not be started: {}", worker.string(), error.message);
}

// --parent: the worker ends when this process does (jobs/worker.h).
std::vector<std::string> worker_args(const JobRequest& request, std::optional<int> channel) {
  std::vector<std::string> args{request.kind, (request.work_dir / "job.json").string()};
  if (channel) args.push_back(fmt::format("--channel={}", *channel));
  args.push_back(fmt::format("--parent={}", this_process_id()));
  if (const auto mb = memory_limit_of(request); mb > 0) args.push_back(fmt::format("--memory-limit-mb={}", mb));
  return args;
}

}  // namespace

std::string JobOutcome::describe() const {
  std::string text;
  switch (status) {
    case Status::kOk: return "finished";
    case Status::kFailed: text = reason; break;
    case Status::kCrashed:
      // Its own last line says the same: not repeated.
      if (out_of_memory_mb > 0) return fmt::format("the worker ran out of memory: the job reached its limit of {} MiB", out_of_memory_mb);
      text = "the worker was killed by " + signal_name(signal);
      break;
    case Status::kTimedOut: text = fmt::format("the worker gave no answer within {} and was killed", seconds(deadline)); break;
    case Status::kCancelled: return "the worker was stopped: its caller is quitting";
  }
  if (!log_line.empty()) text += "; its log ends: " + log_line;
  return text;
}

JobOutcome JobOutcome::finished(nlohmann::json result) {
  JobOutcome out;
  const bool ok = result.is_object() && result.value("ok", false);
  out.status = ok ? Status::kOk : Status::kFailed;
  if (!ok) out.reason = result.is_object() ? result.value("error", "") : "";
  out.result = std::move(result);
  return out;
}

JobOutcome JobOutcome::cancelled() {
  JobOutcome out;
  out.status = Status::kCancelled;
  return out;
}

JobOutcome JobOutcome::failed(std::string reason) {
  JobOutcome out;
  out.reason = std::move(reason);
  return out;
}

JobOutcome JobRunner::run(const JobRequest& request) const {
  const auto cancelled = [&] { return request.cancel != nullptr && request.cancel->load(); };
  if (cancelled()) return JobOutcome::cancelled();
  if (auto s = prepare(request); !s) return JobOutcome::failed(s.error().message);
  auto child = ChildProcess::spawn(worker_, worker_args(request, std::nullopt), request.work_dir / "worker.log");
  if (!child) return JobOutcome::failed(not_started(worker_, child.error()));
  if (request.cancel == nullptr) {
    const ChildExit exit = child->wait(ChildProcess::Clock::now() + request.deadline, request.on_wait);
    return outcome_of(exit, request.deadline, request.work_dir, memory_limit_of(request));
  }
  // Looked at often, so that a quitting caller waits for no worker: killing it ends the wait.
  bool stopped = false;
  auto next_call = ChildProcess::Clock::now() + std::chrono::milliseconds(200);
  const ChildExit exit = child->wait(
      ChildProcess::Clock::now() + request.deadline,
      [&] {
        if (cancelled()) {
          stopped = true;
          (void)child->kill();
          return;
        }
        if (request.on_wait && ChildProcess::Clock::now() >= next_call) {
          request.on_wait();
          next_call = ChildProcess::Clock::now() + std::chrono::milliseconds(200);
        }
      },
      std::chrono::milliseconds(20));
  if (stopped) return JobOutcome::cancelled();
  return outcome_of(exit, request.deadline, request.work_dir, memory_limit_of(request));
}

Result<std::unique_ptr<StartedJob>> JobRunner::start(const JobRequest& request) const {
  RUNG_RETURN_IF_ERROR(prepare(request));
  auto ends = open_channel_pair();
  if (!ends) return ends.error();
  auto child = ChildProcess::spawn(worker_, worker_args(request, ends->in_child), request.work_dir / "worker.log", ends->theirs, ends->in_child);
  close_channel_end(ends->theirs);
  if (!child) {
    close_channel_end(ends->ours);
    return Error{ErrorCode::kNotFound, not_started(worker_, child.error())};
  }
  return std::unique_ptr<StartedJob>(new StartedJob(std::move(*child), ends->ours, request));
}

const JobOutcome& StartedJob::ended(ChildExit exit, std::chrono::milliseconds deadline) {
  if (!outcome_) outcome_ = outcome_of(exit, deadline, request_.work_dir, memory_limit_of(request_));
  return *outcome_;
}

const JobOutcome& StartedJob::wait_for_end() {
  return ended(child_.wait(ChildProcess::Clock::now() + request_.deadline), request_.deadline);
}

Status StartedJob::send(const std::string& line) {
  if (!outcome_ && channel_.send(line)) return {};
  // It stopped reading: it is ending, or has ended.
  return Error{ErrorCode::kRuntime, wait_for_end().describe()};
}

Result<std::string> StartedJob::receive() {
  std::string line;
  if (outcome_) return Error{ErrorCode::kRuntime, outcome_->describe()};
  switch (channel_.receive(line, ChildProcess::Clock::now() + request_.deadline)) {
    case LineChannel::Read::kLine: return line;
    case LineChannel::Read::kClosed: return Error{ErrorCode::kRuntime, wait_for_end().describe()};
    case LineChannel::Read::kTimedOut: break;
  }
  ChildExit exit = child_.kill();
  exit.timed_out = true;
  return Error{ErrorCode::kRuntime, ended(exit, request_.deadline).describe()};
}

JobOutcome StartedJob::finish(std::chrono::milliseconds grace) {
  channel_.close();
  return ended(child_.wait(ChildProcess::Clock::now() + grace), grace);
}

}  // namespace rung
