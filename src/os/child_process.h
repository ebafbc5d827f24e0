// Runs a program in a child process with a deadline. A child that dies by a
// signal or outlives its deadline is reported, never propagated.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace rung {

struct ChildOutcome {
  bool started = false;
  std::string start_error;
  bool timed_out = false;       // killed at the deadline
  int exit_code = -1;           // when it exited
  int signal = 0;               // when a signal ended it
  double elapsed_ms = 0;
  std::string signal_name() const;  // "SIGABRT"
};

// stdout and stderr go to `log_file`.
ChildOutcome run_child(const std::filesystem::path& program, const std::vector<std::string>& args,
                       const std::filesystem::path& log_file, std::chrono::milliseconds deadline);

}  // namespace rung
