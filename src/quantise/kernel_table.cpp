#include "quantise/kernel_table.h"

#include <fmt/format.h>

#include <map>

namespace rung {
namespace {

// ONNX Runtime 1.30's CPU provider: the QDQ node groups its graph
// transformers replace with integer kernels (qdq_selector_action_transformer),
// and the Relu/Clip it folds into the QuantizeLinear after them. It has no
// HardSigmoid or HardSwish kernel, but both are an Add clipped to a range and
// scaled (and for HardSwish a Mul), which QLinearAdd and QLinearMul compute when
// the Add's output is quantised over exactly that range. Everything else,
// ConvTranspose and Div among them, it runs in float.
const std::map<std::string, KernelKind>& cpu_table() {
  static const std::map<std::string, KernelKind> table = {
      {"Conv", KernelKind::kCompute},
      {"MatMul", KernelKind::kCompute},
      {"Gemm", KernelKind::kCompute},
      {"Add", KernelKind::kElementwise},
      {"Mul", KernelKind::kElementwise},
      {"Concat", KernelKind::kElementwise},
      {"AveragePool", KernelKind::kElementwise},
      {"GlobalAveragePool", KernelKind::kElementwise},
      {"LeakyRelu", KernelKind::kElementwise},
      {"Sigmoid", KernelKind::kElementwise},
      {"Softmax", KernelKind::kElementwise},
      {"Reshape", KernelKind::kMovement},
      {"Transpose", KernelKind::kMovement},
      {"Squeeze", KernelKind::kMovement},
      {"Unsqueeze", KernelKind::kMovement},
      {"Flatten", KernelKind::kMovement},
      {"MaxPool", KernelKind::kMovement},
      {"Resize", KernelKind::kMovement},
      {"Gather", KernelKind::kMovement},
      {"Slice", KernelKind::kMovement},
      {"DepthToSpace", KernelKind::kMovement},
      {"SpaceToDepth", KernelKind::kMovement},
      {"Relu", KernelKind::kFolded},
      {"Clip", KernelKind::kFolded},
      {"HardSigmoid", KernelKind::kSaturating},
      {"HardSwish", KernelKind::kSaturating},
  };
  return table;
}

// An NPU that loads the QDQ graph whole computes every node in its integer
// units; the data movers still share their input's scale.
const std::map<std::string, KernelKind>& npu_table() {
  static const std::map<std::string, KernelKind> table = [] {
    std::map<std::string, KernelKind> t;
    for (const char* op : {"Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Concat", "Relu", "Clip", "LeakyRelu",
                           "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softmax", "GlobalAveragePool", "AveragePool", "Pad",
                           "ReduceMean", "BatchNormalization", "Pow", "Sqrt", "InstanceNormalization", "LayerNormalization", "Erf", "Exp",
                           "Abs", "Neg", "Sum", "Max", "Min"}) {
      t[op] = KernelKind::kCompute;
    }
    for (const char* op : {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "MaxPool", "Resize", "Slice", "Split", "Gather",
                           "DepthToSpace", "SpaceToDepth"}) {
      t[op] = KernelKind::kMovement;
    }
    return t;
  }();
  return table;
}

}  // namespace

Result<QdqTarget> parse_qdq_target(const std::string& text) {
  if (text == "cpu") return QdqTarget::kCpu;
  if (text == "npu") return QdqTarget::kNpu;
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown target '{}' (expected cpu or npu)", text)};
}

const char* qdq_target_name(QdqTarget target) { return target == QdqTarget::kCpu ? "cpu" : "npu"; }

KernelRule kernel_rule(QdqTarget target, const std::string& op) {
  const auto& table = target == QdqTarget::kCpu ? cpu_table() : npu_table();
  auto it = table.find(op);
  if (it == table.end()) {
    return {KernelKind::kNone, fmt::format("no quantised {} kernel on the {}", op, target == QdqTarget::kCpu ? "CPU" : "NPU")};
  }
  switch (it->second) {
    case KernelKind::kCompute: return {it->second, "integer kernel"};
    case KernelKind::kElementwise: return {it->second, "integer kernel where an input is already quantised"};
    case KernelKind::kMovement: return {it->second, "moves codes at its input's scale"};
    case KernelKind::kFolded: return {it->second, "folded into the quantised node before it"};
    case KernelKind::kSaturating: return {it->second, "integer Add saturating at its bounds (and Mul) where its input is quantised"};
    case KernelKind::kNone: break;
  }
  return {KernelKind::kNone, ""};
}

}  // namespace rung
