// Calibration, streamed: the f32 graph on ONNX Runtime's CPU rung, with every
// activation to be quantised exposed as an output, run over the calibration
// inputs one at a time. Each output is read where ONNX Runtime left it and
// folded into fixed-size per-tensor statistics, then released: memory does
// not grow with the number of inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "parity/inputs.h"
#include "quantise/histogram.h"
#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

class OrtProcess;

struct Calibrator {
  enum class Method { kMinMax, kPercentile, kEntropy };
  Method method = Method::kMinMax;
  double percentile = 99.999;
  std::size_t bins = 2048;

  // "minmax", "percentile" (99.999), "percentile=99.99", "entropy"
  static Result<Calibrator> parse(const std::string& text);
  std::string name() const;      // "minmax", "percentile", "entropy"
  std::size_t histogram_bins() const { return method == Method::kMinMax ? 0 : bins; }
  // The range a tensor quantises over, at `bits` bits.
  Range range(const TensorStats& stats, int bits) const;
};

struct CalibrationOptions {
  std::vector<std::string> tensors;  // to observe (graph inputs among them are read from the inputs fed)
  std::vector<InputItem> items;
  InputPlan plan;
  Calibrator calibrator;
  int threads = 0;                   // intra-op threads; 0: ONNX Runtime's default
  std::filesystem::path work_dir;    // the graph with its activations exposed is written here
  std::function<void(std::size_t done, std::size_t total, const std::string& item)> on_progress;
};

struct Calibration {
  std::map<std::string, TensorStats> stats;
  std::size_t inputs = 0;
  std::uint64_t values = 0;       // folded into the statistics, over every tensor and input
  double seconds = 0;             // all of it: the session, the inputs, the runs, the statistics
  double run_seconds = 0;         // of which ONNX Runtime's runs, statistics excluded
  double statistics_seconds = 0;  // of which folding outputs into the statistics
};

// `prepared` with every tensor named that is not already an output made one (float).
onnx::ModelProto exposing(const onnx::ModelProto& prepared, const std::vector<std::string>& tensors);

// One calibration item's inputs as tensors (the graphs rung quantises take tensors only).
Result<std::vector<Tensor>> calibration_tensors(const InputItem& item, const ModelIo& io, const InputPlan& plan);

// Errors: an input that does not fit the model (kInvalidArgument), a session
// or run that fails (kRuntime), a planned tensor the runs never produced.
Result<Calibration> calibrate(OrtProcess& process, const onnx::ModelProto& prepared, const CalibrationOptions& options);

}  // namespace rung
