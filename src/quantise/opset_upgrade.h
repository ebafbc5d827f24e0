// Raising a model's default-domain opset with ONNX's own version converter
// (libonnx), after the two preparations the converter needs on exported graphs:
// Constant nodes lifted to initializers, and every tensor's rank known.
#pragma once

#include <cstdint>
#include <string>

#include "rung/result.h"

namespace onnx {
class ModelProto;
class GraphProto;
}  // namespace onnx

namespace rung {

// The default domain's opset (0 when the model imports none).
std::int64_t default_opset(const onnx::ModelProto& model);

// Moves every Constant node that holds a tensor into the graph's initializers
// (same name, same value): exporters such as Paddle2ONNX store all weights as
// Constant nodes, where shape inference and weight quantisation cannot see them.
// Returns how many were lifted.
int lift_constants(onnx::GraphProto& graph);

// ONNX shape inference, then the ranks it leaves unknown where a Reshape's
// target shape is computed (ONNX 1.12 gives up on those; the length of the
// target shape still fixes the rank), repeated until nothing more is learnt.
// Errors only for a graph shape inference rejects.
Status infer_shapes(onnx::ModelProto& model);

struct OpsetUpgrade {
  std::int64_t from = 0;
  std::int64_t to = 0;
  int constants_lifted = 0;
};

// Lifts constants, infers shapes and converts to `target` (a no-op conversion
// when the model is already there). An Error names what the converter refused.
Result<OpsetUpgrade> upgrade_opset(onnx::ModelProto& model, std::int64_t target);

// The highest opset the linked libonnx's converter reaches.
std::int64_t highest_convertible_opset();

}  // namespace rung
