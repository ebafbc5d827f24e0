// The bounds every entry point puts on the numbers that size a run, the
// library's and the CLI's alike (the CLI states them in its ranges): a deadline
// is finite, positive and at most a day, so a time point never overflows and a
// typo never waits forever; random input sets are counted, not unbounded.
// Thread counts are bounded by the machine (rung/cpus.h's usable_cpus()).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace rung {

inline constexpr std::chrono::milliseconds kMinDeadline{1};
inline constexpr std::chrono::milliseconds kMaxDeadline = std::chrono::hours(24);
inline constexpr std::size_t kMaxRandomInputSets = 1'000'000;
// How much slower than the floor a faithful rung may be and still be taken:
// from a hundredth (only a rung a hundred times faster) to ten thousand times
// (any rung that works, for an accelerator whose point is to free the CPU).
inline constexpr double kMinAcceptanceRatio = 0.01;
inline constexpr double kMaxAcceptanceRatio = 10'000;

// How much data a worker process may hold (MiB). Every worker runs under a
// limit, so a provider that allocates without end ends its worker saying so,
// not the machine. kWorkerMemoryDefault: half the machine's memory, and never
// less than kMinDefaultWorkerMemoryMib (a small device still builds a
// session); 0: no limit, asked for by name; else that many MiB.
inline constexpr std::uint64_t kWorkerMemoryDefault = ~std::uint64_t{0};
inline constexpr std::uint64_t kMaxWorkerMemoryMib = std::uint64_t{1} << 24;  // 16 TiB
inline constexpr std::uint64_t kMinDefaultWorkerMemoryMib = 2048;
// The limit a worker gets for `asked` on a machine with `machine_mib` of memory
// (0 when the machine does not say): 0 for no limit.
constexpr std::uint64_t worker_memory_limit_mib(std::uint64_t asked, std::uint64_t machine_mib) {
  if (asked != kWorkerMemoryDefault) return asked;
  if (machine_mib == 0) return 0;  // nothing to take half of: no limit rather than a guess
  const std::uint64_t half = machine_mib / 2;
  return half < kMinDefaultWorkerMemoryMib ? kMinDefaultWorkerMemoryMib : half;
}

}  // namespace rung
