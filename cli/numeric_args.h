// Every number the CLI takes is checked where it is parsed: a finite value
// inside a stated range, so `--deadline nan`, `--duration inf` or `--threads
// 100000` is a usage error (exit 2) naming the option and the range, never a
// wait forever, an overflow or a machine brought to its knees.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace rung::cli {

// A finite number in [lo, hi], said with its unit ("seconds").
CLI::Validator finite_within(double lo, double hi, const std::string& unit);

// A whole number in [lo, hi].
CLI::Validator whole_within(long long lo, long long hi);

// A thread count: 0 (ONNX Runtime's default) up to the logical CPUs this process may use.
CLI::Validator thread_count();

// Limits shared by the commands.
inline constexpr double kMaxDeadlineSeconds = 86'400;  // a day
inline constexpr double kMinDeadlineSeconds = 0.001;   // the runner counts in milliseconds

}  // namespace rung::cli
