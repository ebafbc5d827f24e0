// QDQ insertion: which nodes of a float graph compute quantised on the target
// (its kernel table, quantise/kernel_table.h; islands keep more float), and the
// rewrite itself. Every tensor a quantised node reads or writes gets one
// QuantizeLinear/DequantizeLinear pair from its calibrated range (activations
// asymmetric), so a run of float nodes sits between one conversion in and one
// out, never a pair between two float nodes; weights become int8 or int16
// initializers behind a DequantizeLinear (symmetric, per output channel unless
// per-tensor is asked for); biases int32 at input scale x weight scale.
// 16-bit tensors use the com.microsoft QuantizeLinear/DequantizeLinear, which
// ONNX Runtime accepts below opset 21.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "quantise/histogram.h"
#include "quantise/kernel_table.h"
#include "rung/model.h"
#include "rung/result.h"

namespace onnx {
class ModelProto;
class GraphProto;
}  // namespace onnx

namespace rung {

struct QdqSettings {
  NumericForm form = NumericForm::kInt8;  // kInt8, kA16W8, kA16W16 or kW8
  QdqTarget target = QdqTarget::kCpu;     // whose integer kernels decide what is quantised
  bool signed_activations = false;        // int8/int16 activations instead of uint8/uint16
  bool per_channel = true;                // weights: one scale per output channel
  // 8-bit weights in 7 bits (ONNX Runtime's reduce_range): the uint8 x int8
  // kernels of x86 CPUs without VNNI add pairs of products in saturating 16-bit
  // lanes, so a CPU-scored full-range form can read worse than it is.
  bool reduce_range = false;
  std::vector<std::string> keep_float;    // node names or op types that stay float
  std::vector<std::string> float_from;    // tensors whose consumers, and everything downstream, stay float
};

// "int8" (uint8 activations unless signed), "a16w8", "a16w16", "w8".
Result<NumericForm> parse_quantised_form(const std::string& text);
const char* form_recipe_name(NumericForm form);  // "int8", "a16w8", "a16w16", "w8"
// int8 and w8 are for the CPU that scores them; a 16-bit form exists for an NPU (the CPU runs 16-bit QDQ in float).
QdqTarget default_qdq_target(NumericForm form);
int activation_bits(NumericForm form);  // 32 for w8: its activations stay float
int weight_bits(NumericForm form);
// w8: int8 weights behind a Cast and a Mul by their scales, which ONNX Runtime
// folds into float initializers when it builds the session, so the file is
// a quarter of the size and the run is the float graph's, on rounded weights.
// No activation is quantised, no QuantizeLinear or DequantizeLinear written.
bool weights_only(NumericForm form);

struct QdqPlan {
  std::vector<std::string> activations;  // float tensors that get a Q/DQ pair, in graph order
  // Outputs of data-movement nodes (Reshape, Transpose, MaxPool, Resize, ...)
  // quantise with their input's scale, so the integer kernel moves the codes
  // untouched: output -> the tensor whose range it takes.
  std::map<std::string, std::string> shared;
  // Outputs whose range is known by construction (Sigmoid, Softmax and
  // HardSigmoid in [0, 1], Tanh in [-1, 1]): not calibrated, so no calibrator
  // clips a probability.
  std::map<std::string, Range> fixed;
  std::set<std::string> quantised;       // node names, the folded ones among them
  // Activations the target folds into the quantised node before them (Relu,
  // Clip): the tensor between the two gets no pair, the activation's output does.
  std::set<std::string> folded;
  std::vector<std::string> islands;      // nodes the settings keep float
  std::size_t unsupported = 0;           // nodes left float: no integer kernel on the target, or nothing quantised around them
  std::size_t nodes = 0;

  // Per op type: how its nodes were placed, and why the float ones are float.
  struct OpPlacement {
    std::size_t quantised = 0, folded = 0, float_nodes = 0;
    std::set<std::string> reasons;  // why nodes of this type stayed float
  };
  std::map<std::string, OpPlacement> by_op;

  // The activations calibration observes: those neither sharing another's range nor fixed.
  std::vector<std::string> calibrated() const;
  // Every activation's range: the fixed ones, and the shared ones filled from their source.
  Result<std::map<std::string, Range>> resolve(std::map<std::string, Range> observed) const;
};

// Gives every unnamed node a name ("Conv_12"), so that reports and
// --keep-float can name any node.
void name_unnamed_nodes(onnx::GraphProto& graph);

// Errors name a --keep-float or --float-from that matches nothing in the graph.
// `prepared` has its shapes inferred (element types decide what is float).
Result<QdqPlan> plan_qdq(const onnx::ModelProto& prepared, const QdqSettings& settings);

struct QdqCounts {
  std::size_t activations = 0;   // Q/DQ pairs
  std::size_t weights = 0;       // quantised weight tensors
  std::size_t biases = 0;        // int32 biases
  std::size_t constants = 0;     // other float initializers read by quantised nodes
  std::size_t raised_scales = 0; // weight channels whose scale was raised so the int32 bias fits
  std::size_t saturated = 0;     // HardSigmoid/HardSwish run as an integer Add that saturates (and a Mul)
};

// Rewrites `model` (the prepared graph the plan was made on). `ranges` holds a
// range for every planned activation.
Result<QdqCounts> insert_qdq(onnx::ModelProto& model, const QdqPlan& plan, const std::map<std::string, Range>& ranges,
                             const QdqSettings& settings);

}  // namespace rung
