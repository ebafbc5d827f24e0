// `rung quantise` and `rung upgrade`: release-time forms of a model, each
// written only with its evidence. The opset upgrade is proven to compute the
// same as the original (parity's tensor gate at Tolerance::close()) before it
// is used; a quantised form (int8, a16w8, a16w16 QDQ; w8 weights) is calibrated on real
// inputs, streamed, and scored against the f32 model with the model's decision
// gates on a holdout set that shares no input with the calibration set. It is
// written only when every gate passes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

// Where the work runs, shared by both commands.
struct ReleaseToolSettings {
  RuntimeSearchOptions runtimes;
  std::string runtime;                      // "" the chosen build, a version ("1.30.0") or a path
  std::filesystem::path worker;             // parity's worker; default: beside the executable
  std::filesystem::path work_dir;           // default: a fresh temporary directory, removed afterwards
  std::chrono::milliseconds deadline{600'000};  // per parity step (a session build, one input)
  int threads = 0;                          // intra-op threads of the calibration session; 0: ONNX Runtime's default
  // Progress: a stage ("calibrating", "scoring"), items done of total, the current item.
  std::function<void(const std::string& stage, std::size_t done, std::size_t total, const std::string& item)> on_progress;
};

struct UpgradeOptions {
  std::filesystem::path model;
  std::int64_t opset = 17;
  std::filesystem::path out;
  // The proof's inputs: a directory (tensors, or images with the gate file's or
  // --preprocess's preprocessing), or `random` seeded random input sets.
  std::filesystem::path inputs_dir;
  std::size_t random = 0;
  std::uint64_t seed = 0;
  std::filesystem::path gate_file;        // its preprocess and inputs are used; its gates are not
  std::filesystem::path preprocess_file;
  ReleaseToolSettings settings;
};

struct UpgradeOutcome {
  std::int64_t from = 0, to = 0;
  bool proven = false;
  std::string failing_output;  // the first output that differs, when not proven
  bool written = false;
  std::string text;            // for people
};

// Errors: usage or input problems (kInvalidArgument, kNotFound), no runtime
// (kNoRuntime), a graph the converter refuses (kUnsupported), a side that
// could not run (kRuntime). A conversion that computes something else is an
// outcome, not an error: proven false, nothing written.
Result<UpgradeOutcome> run_upgrade(const UpgradeOptions& options);

struct QuantiseOptions {
  std::filesystem::path model;             // the f32 file
  std::string name;                        // the model's name in its id ("ppocr_det_v4"); default: the file's stem
  std::string form = "int8";               // "int8", "a16w8", "a16w16", "w8"
  std::string target;                      // whose integer kernels place the QDQ: "cpu", "npu"; "" = cpu for int8, npu for 16-bit forms
  bool signed_activations = false;         // int8/int16 activations instead of uint8/uint16
  bool per_tensor = false;                 // one weight scale per tensor instead of per output channel
  bool reduce_range = false;               // 8-bit weights in 7 bits (see QdqSettings)
  std::string calibrator = "minmax";       // "minmax", "percentile=P", "entropy"
  std::filesystem::path calibration_dir;
  std::filesystem::path holdout_dir;
  std::filesystem::path gate_file;         // preprocessing, input values and the decision gates
  std::vector<std::string> keep_float;     // node names or op types
  std::vector<std::string> float_from;     // tensors: their consumers and everything downstream stay float
  std::int64_t opset = 17;                 // a model below opset 13 is raised to this first
  std::filesystem::path out;               // default: NAME_<form>.onnx in the current directory
  std::filesystem::path report;            // default: beside the written file, OUT with .report.json
  bool force = false;                      // write the file even when a gate fails
  // When the gate fails: the other calibrators, then float islands at the nodes
  // that add the most error, the fewest that make the gate pass on the holdout.
  bool search = false;
  int speed_runs = 10;                     // timed runs of the f32 file and the form, in turns, on one calibration input; 0: not timed
  // An int8 form placed for the CPU that the timed runs show slower than f32
  // there (see quantise/speed.h) fails like a gate; this writes it all the same.
  bool allow_slower = false;
  std::string command_line;                // recorded in the report
  ReleaseToolSettings settings;
};

struct QuantiseOutcome {
  bool passed = false;             // every gate passed (and the upgrade, when one was needed, was proven)
  bool written = false;            // the quantised file is at `file`
  std::filesystem::path file;
  std::filesystem::path report_file;  // empty when no report was written
  std::string model_id;            // read from the quantised graph: "ppocr_det_v4_i8"
  std::vector<std::string> failed; // the gates (or the upgrade) that failed
  std::string text;                // the report for people
  std::string json;                // the report (schemas/quantise-report.schema.json)
};

// Errors: usage or input problems (kInvalidArgument, kNotFound: a bad gate file,
// an empty or overlapping holdout, a --keep-float that names nothing), no
// runtime (kNoRuntime), a graph that cannot be upgraded (kUnsupported), a side
// that could not run (kRuntime). A gate that fails is an outcome.
Result<QuantiseOutcome> run_quantise(const QuantiseOptions& options);

}  // namespace rung
