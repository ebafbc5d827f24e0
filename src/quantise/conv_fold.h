// Folding a per-channel affine into the convolution before it: a
// BatchNormalization, or a Mul/Add/Sub/Div by a constant that is one value per
// output channel (or one value); and one into the unpadded convolution after
// it, per input channel. The weights and bias absorb it, so a quantised
// graph quantises the tensor the network computes instead of an intermediate
// one whose channels differ in range by orders of magnitude, and the integer
// convolution writes the value the next quantised node reads, with no
// requantisation between them.
#pragma once

namespace onnx {
class GraphProto;
}

namespace rung {

struct ConvFolds {
  int batch_norms = 0;  // BatchNormalization nodes folded
  int affines = 0;      // Mul/Add/Sub/Div-by-constant nodes folded
  int total() const { return batch_norms + affines; }
};

// Folds, until none is left, every such node whose input is a Conv's (or an
// ungrouped ConvTranspose's) output read by nothing else, or whose output only
// an ungrouped Conv without padding reads; its parameters and the
// convolution's weight and bias held as initializers read by nothing else.
ConvFolds fold_into_convolutions(onnx::GraphProto& graph);

}  // namespace rung
