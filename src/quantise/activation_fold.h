// Rewrites that give a provider a kernel to run: a division by a constant
// becomes a multiplication (quantised kernels multiply; none divides), and the
// hard-sigmoid and hard-swish spelled out as Add/Clip/Mul/Div become the one
// operator each, so a quantised graph places each as one unit (on the CPU an
// integer Add that saturates and a Mul, quantise/kernel_table.h; on an NPU its
// own kernel) instead of requantising after every step.
#pragma once

#include <cstdint>

namespace onnx {
class GraphProto;
}

namespace rung {

struct ActivationFolds {
  int divisions = 0;      // Div by a constant, now a Mul by its reciprocal
  int hard_sigmoids = 0;  // Clip(x + 3, 0, 6) / 6 -> HardSigmoid(alpha 1/6, beta 1/2)
  int hard_swishes = 0;   // x * HardSigmoid(x) -> HardSwish (opset 14 and above)
  int total() const { return divisions + hard_sigmoids + hard_swishes; }
};

ActivationFolds fold_activations(onnx::GraphProto& graph, std::int64_t opset);

}  // namespace rung
