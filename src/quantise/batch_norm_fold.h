// Folding BatchNormalization into the convolution before it: the weights and
// bias absorb the normalisation, so a quantised graph quantises the tensor the
// network computes instead of a pre-normalisation one whose channels differ in
// range by orders of magnitude (one scale per tensor would erase the small ones).
#pragma once

namespace onnx {
class GraphProto;
}

namespace rung {

// Folds every BatchNormalization whose input is a Conv's (or an ungrouped
// ConvTranspose's) output read by nothing else, with all parameters held as
// initializers. Returns how many were folded.
int fold_batch_norms(onnx::GraphProto& graph);

}  // namespace rung
