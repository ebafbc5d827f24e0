// A thread count asked of a session is bounded by the CPUs this process may
// use: more threads than that only queue behind each other, and a huge count
// makes ONNX Runtime try to start them all. A deadline is bounded too
// (rung/limits.h): a time point past it would overflow the clock.
#pragma once

#include <chrono>
#include <string_view>

#include "rung/result.h"

namespace rung {

// Ok for 0 (ONNX Runtime's default) up to usable_cpus(); else kInvalidArgument
// naming `option`, the count and what this machine has.
Status check_thread_count(int threads, std::string_view option);

// Ok for kMinDeadline to kMaxDeadline; else kInvalidArgument naming `what` ("the deadline").
Status check_deadline(std::chrono::milliseconds deadline, std::string_view what);

}  // namespace rung
