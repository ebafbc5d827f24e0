// The mixed-range hazard: one scale for a tensor that joins ranges far apart
// (a Concat of pixel coordinates and 0..1 scores) leaves the narrow part only
// a few quantisation levels, and the decisions made on it vanish. Found from
// the calibrated ranges before anything is written, each with the float
// island that avoids it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "quantise/histogram.h"
#include "quantise/qdq.h"

namespace onnx {
class ModelProto;
}

namespace rung {

struct MixedRangeInput {
  std::string tensor;
  Range range;
  double levels = 0;  // quantisation steps its range spans at the joined tensor's scale
};

struct MixedRangeHazard {
  std::string node;    // the Concat
  std::string output;  // the joined tensor
  Range joined;
  int bits = 8;
  std::vector<MixedRangeInput> narrow;  // the inputs left with too few levels
  std::vector<std::string> island;      // the options that keep the join and what follows float
  std::string describe() const;
};

// Inputs spanning fewer than this many levels of the joined scale are flagged.
inline constexpr double kMinimumLevels = 16;

std::vector<MixedRangeHazard> find_mixed_ranges(const onnx::ModelProto& prepared, const QdqPlan& plan,
                                                const std::map<std::string, Range>& ranges, int activation_bits);

}  // namespace rung
