// The inputs the probe feeds a model: the same bytes for the floor and every
// rung, from recorded tensors, the spec's values, or a seeded generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rung/input_spec.h"
#include "session/model_io.h"

namespace rung {

Result<std::vector<Tensor>> make_inputs(const ModelIo& io, const InputSpec& spec, std::uint64_t seed);

// "x float32 [1, 3, 64, 64] (random); sr int64 [] = 16000" — said when the floor cannot run them.
std::string describe_inputs(const std::vector<Tensor>& inputs, const InputSpec& spec);

}  // namespace rung
