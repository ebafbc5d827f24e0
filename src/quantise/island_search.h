// Where quantisation hurts: each quantised node's share of the error, measured
// by running the QDQ graph and the float graph side by side on a few
// calibration inputs and comparing every quantised tensor (signal to
// quantisation noise, in dB). A node's loss is how much worse its output is
// than the worst of its inputs: the error it adds, not the error it inherits.
// `rung quantise --search` keeps the fewest of the worst nodes float that make
// the gate pass.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "parity/inputs.h"
#include "quantise/qdq.h"
#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

class OrtProcess;

struct NodeError {
  std::string node, op;
  // What keeping it float takes: the node, and for an activation folded into
  // the quantised node before it, that node too (alone, the activation would
  // only split the fused pair and quantise the tensor between them).
  std::vector<std::string> keep_float;
  std::string output;   // the tensor compared
  double input_db = 0;  // the worst SQNR among its data inputs
  double output_db = 0;
  double loss_db() const { return input_db - output_db; }
};

// The nodes writing the graph's outputs first, then the largest loss first; nodes
// whose output is not compared (no float output) are left out.
Result<std::vector<NodeError>> rank_node_errors(OrtProcess& process, const onnx::ModelProto& prepared, const onnx::ModelProto& quantised,
                                                const QdqPlan& plan, const std::vector<InputItem>& items, const InputPlan& input_plan,
                                                int threads, const std::filesystem::path& work);

}  // namespace rung
