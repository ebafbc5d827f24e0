// A program run in a child process. A child that dies by a signal or outlives
// its deadline is reported, never propagated; one still running when its
// handle goes is killed and reaped, so no child outlives its caller's interest.
#pragma once

#include <chrono>
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
  int signal = 0;          // when a signal ended it
  double elapsed_ms = 0;   // from the start to its end (or its kill)
};

std::string signal_name(int signal);  // "SIGABRT"

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts `program args...` with stdin from /dev/null and stdout and stderr in
  // `log_file`. `pass_fd`, when not -1, is given to the child as descriptor `as_fd`.
  static Result<ChildProcess> spawn(const std::filesystem::path& program, const std::vector<std::string>& args,
                                    const std::filesystem::path& log_file, int pass_fd = -1, int as_fd = -1);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();

  // Waits until it ends; at `until` it is killed. `on_wait` is called about every
  // `every` while it runs (from this thread).
  ChildExit wait(Clock::time_point until, const std::function<void()>& on_wait = {},
                 std::chrono::milliseconds every = std::chrono::milliseconds(200));
  // Kills it (if it still runs) and reaps it.
  ChildExit kill();

 private:
  ChildProcess(long pid, Clock::time_point start) : pid_(pid), start_(start) {}
  ChildExit reaped(int status, bool timed_out);

  long pid_ = -1;  // the process id; -1 once reaped
  Clock::time_point start_;
  ChildExit exit_;
};

}  // namespace rung
