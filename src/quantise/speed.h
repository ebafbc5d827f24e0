// What a written form costs on the CPU that scored it, measured in this process
// on one calibration input: both graphs run in turns (so a busy machine slows
// both alike) and each is profiled, so a form whose conversions eat its gain
// says so in its own report.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/speed_rule.h"
#include "parity/inputs.h"
#include "quantise/kernel_table.h"
#include "rung/model.h"
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

// How a form's timed runs are judged against the f32 file's: the probe's rule
// (core/speed_rule.h) on the ratios of runs taken in turns (form ms / f32 ms,
// pair by pair), at 95% from six pairs, asking no gain. Slower means the whole
// sign-test interval of the median ratio lies above 1 (one touching 1 is within
// noise), so noise on a busy machine never refuses a form; only one slower in
// nearly every pair is.
SpeedRule quantised_speed_rule();

struct SpeedEvidence {
  std::string input;          // the calibration input both ran on
  int runs = 0;               // timed runs of each, in turns
  KernelTimes f32, quantised;
  std::vector<double> f32_runs_ms, quantised_runs_ms;  // each timed run, in the order taken
  double speedup() const { return quantised.run_ms > 0 ? f32.run_ms / quantised.run_ms : 0; }
  SpeedJudgement judgement() const;  // by quantised_speed_rule(); ratio, low and high are form / f32
};

// The speed refusal: an int8 or w8 form placed for the CPU is there to be
// faster on it, so one the judgement calls slower does not pay, whatever its
// gates say. A 16-bit form, or one placed for an NPU, was asked for its
// accuracy or its target, not for this CPU's clock; untimed (`speed` null) or
// allowed slower, nothing is refused. What failed, in the report's words, or
// nothing.
std::optional<std::string> speed_refusal(NumericForm form, QdqTarget target, const SpeedEvidence* speed, bool allow_slower);

// Runs `reference` (the f32 file) and `candidate` on `item`, `runs` times each
// in turns after one warm-up, then profiles three runs of each under `work`.
Result<SpeedEvidence> measure_speed(OrtProcess& process, const std::filesystem::path& reference, const std::filesystem::path& candidate,
                                    const InputItem& item, const InputPlan& plan, int threads, int runs, const std::filesystem::path& work);

}  // namespace rung
