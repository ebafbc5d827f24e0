// A program run in a child process. A child that dies by a signal or outlives
// its deadline is reported, never propagated; one still running when its
// handle goes is killed and reaped, so no child outlives its caller's interest.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "rung/result.h"

namespace rung {

// How a child ended.
struct ChildExit {
  bool timed_out = false;  // killed at its deadline
  int exit_code = -1;      // when it exited
  int signal = 0;          // when the system ended it: a POSIX signal, or a Windows exception code (0xC0000005 as an int)
  double elapsed_ms = 0;   // from the start to its end (or its kill)
};

std::string signal_name(int signal);  // "SIGABRT"; on Windows "EXCEPTION_ACCESS_VIOLATION"

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts `program args...` with stdin from /dev/null (NUL) and stdout and stderr
  // in `log_file`. `pass_fd`, when not -1, is given to the child as descriptor
  // `as_fd` (on Windows a handle, which keeps its value: `as_fd` must equal it;
  // os/line_channel.h's ChannelEnds::in_child is right on both). On Windows the
  // child is put in a Job Object that kills it, and what it started, when this
  // process ends, however it ends.
  static Result<ChildProcess> spawn(const std::filesystem::path& program, const std::vector<std::string>& args,
                                    const std::filesystem::path& log_file, int pass_fd = -1, int as_fd = -1);

  ChildProcess(ChildProcess&& other) noexcept
      : pid_(other.pid_), process_(other.process_), job_(other.job_), start_(other.start_), exit_(other.exit_) {
    other.pid_ = -1;
    other.process_ = other.job_ = kNoHandle;
  }
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();

  // Waits until it ends; at `until` it is killed. `on_wait` is called about every
  // `every` while it runs (from this thread).
  ChildExit wait(Clock::time_point until, const std::function<void()>& on_wait = {},
                 std::chrono::milliseconds every = std::chrono::milliseconds(200));
  // Kills it (if it still runs) and reaps it.
  ChildExit kill();
  // Its process id; -1 once it has ended and been reaped.
  long pid() const { return pid_; }

 private:
  static constexpr std::intptr_t kNoHandle = 0;
  ChildProcess(long pid, Clock::time_point start, std::intptr_t process = kNoHandle, std::intptr_t job = kNoHandle)
      : pid_(pid), process_(process), job_(job), start_(start) {}
  ChildExit reaped(int status, bool timed_out);

  long pid_ = -1;  // the process id; -1 once reaped
  // Windows only: the process's handle and its Job Object's (kNoHandle on POSIX).
  std::intptr_t process_ = kNoHandle;
  std::intptr_t job_ = kNoHandle;
  Clock::time_point start_;
  ChildExit exit_;
};

}  // namespace rung
