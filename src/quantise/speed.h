// What a written form costs on the CPU that scored it, measured in this process
// on one calibration input: both graphs run in turns (so a busy machine slows
// both alike) and each is profiled, so a form whose conversions eat its gain
// says so in its own report.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "parity/inputs.h"
#include "rung/result.h"
#include "session/placement.h"

namespace rung {

class OrtProcess;

struct KernelTimes {
  double run_ms = 0;          // median wall time of a run
  double kernel_ms = 0;       // the profile's kernel time per run
  double conversion_ms = 0;   // QuantizeLinear and DequantizeLinear
  double integer_ms = 0;      // kernels on integer inputs (QLinearConv, uint8 Resize, ...)
  double float_ms = 0;        // the rest: float islands, or the whole f32 graph
  int conversion_nodes = 0;
  std::vector<OpTime> ops;    // most time first
};

struct SpeedEvidence {
  std::string input;          // the calibration input both ran on
  int runs = 0;               // timed runs of each, in turns
  KernelTimes f32, quantised;
  double speedup() const { return quantised.run_ms > 0 ? f32.run_ms / quantised.run_ms : 0; }
};

// Runs `reference` (the f32 file) and `candidate` on `item`, `runs` times each
// in turns after one warm-up, then profiles three runs of each under `work`.
Result<SpeedEvidence> measure_speed(OrtProcess& process, const std::filesystem::path& reference, const std::filesystem::path& candidate,
                                    const InputItem& item, const InputPlan& plan, int threads, int runs, const std::filesystem::path& work);

}  // namespace rung
