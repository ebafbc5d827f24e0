// The bounds every entry point puts on the numbers that size a run, the
// library's and the CLI's alike (the CLI states them in its ranges): a deadline
// is finite, positive and at most a day, so a time point never overflows and a
// typo never waits forever; random input sets are counted, not unbounded.
// Thread counts are bounded by the machine (rung/cpus.h's usable_cpus()).
#pragma once

#include <chrono>
#include <cstddef>

namespace rung {

inline constexpr std::chrono::milliseconds kMinDeadline{1};
inline constexpr std::chrono::milliseconds kMaxDeadline = std::chrono::hours(24);
inline constexpr std::size_t kMaxRandomInputSets = 1'000'000;
// How much slower than the floor a faithful rung may be and still be taken:
// from a hundredth (only a rung a hundred times faster) to ten thousand times
// (any rung that works, for an accelerator whose point is to free the CPU).
inline constexpr double kMinAcceptanceRatio = 0.01;
inline constexpr double kMaxAcceptanceRatio = 10'000;

}  // namespace rung
