// Where a target runs a node quantised: one table per target, so that QDQ is
// inserted only around the nodes the target has integer kernels for, and runs
// of nodes without one stay float between a single conversion in and a single
// conversion out.
#pragma once

#include <string>

#include "rung/result.h"

namespace rung {

enum class QdqTarget {
  kCpu,  // ONNX Runtime's CPU provider: its QDQ fusions (QLinearConv, QLinearAdd, ...)
  kNpu,  // an NPU that takes the whole QDQ graph (QNN's HTP and the like): every op it lists runs quantised
};

// "cpu", "npu".
Result<QdqTarget> parse_qdq_target(const std::string& text);
const char* qdq_target_name(QdqTarget target);

enum class KernelKind {
  kNone,         // no quantised kernel: the node computes in float
  kCompute,      // an integer kernel that pays for converting its inputs (Conv, MatMul, Gemm)
  kElementwise,  // an integer kernel, taken when one of its inputs is already quantised (Add, Mul, Concat, pooling, ...)
  kMovement,     // moves codes without arithmetic: taken when its input is quantised, its output sharing that scale
  kFolded,       // an activation the target folds into the quantised node before it (Relu, Clip): no conversion between them
  // A piecewise-linear activation with no kernel of its own, run as integer
  // kernels the target has (HardSigmoid: an Add whose quantised output
  // saturates at the activation's bounds; HardSwish: that, then a Mul), taken
  // when its input is already quantised.
  kSaturating,
};

struct KernelRule {
  KernelKind kind = KernelKind::kNone;
  std::string why;  // for the report: why a node of this type is placed as it is
};

KernelRule kernel_rule(QdqTarget target, const std::string& op_type);

}  // namespace rung
