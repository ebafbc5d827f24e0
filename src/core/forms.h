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

}  // namespace rung
