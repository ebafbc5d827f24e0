// Which arithmetic a rung runs for a model of a given role: the rule the
// engine's placement, its engine builds and bench all follow.
#pragma once

#include "rung/ladder.h"
#include "rung/model.h"

namespace rung {

// Whether a rung changes an embedder's arithmetic (and so may not serve it).
bool changes_arithmetic(const RungSpec& rung);
// The engine precision directory for a model on a compiling rung: "fp16" or "f32".
bool builds_fp16(const RungSpec& rung, Role role);
// The quantised form a rung runs for this model (the last one registered): on
// a rung that loads quantised forms (an NPU's), and on the CPU when the
// model's resolved variant names the CPU (ONNX Runtime's CPU runs a QDQ graph
// on its integer kernels). Null for any other rung, for an embedder
// (embeddings from every device must compare) or when the model has none.
const DerivedForm* quantised_form_for(const RungSpec& rung, const ModelRegistration& model);

}  // namespace rung
