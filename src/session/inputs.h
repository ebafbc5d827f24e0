// The inputs the probe feeds a model: the same bytes for the floor and every
// rung, from recorded tensors, the spec's values, or a seeded generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rung/input_spec.h"
#include "session/model_io.h"

namespace rung {

// Checks the spec against the model (check_input_spec), then makes one tensor per input.
Result<std::vector<Tensor>> make_inputs(const ModelIo& io, const InputSpec& spec, std::uint64_t seed);
// Seeded values for these inputs alone, sized by the spec (no recorded tensors):
// for callers that give the model's other inputs themselves and checked the spec.
Result<std::vector<Tensor>> generate_inputs(const std::vector<TensorInfo>& inputs, const InputSpec& spec, std::uint64_t seed);

// Every name in the spec must be the model's: a dims key "input:axis" an input
// and one of its axes (a fixed axis only at its own size), any other dims key a
// symbolic dimension of an input, a values key an input. Errors name the key.
Status check_input_spec(const ModelIo& io, const InputSpec& spec);

// "x float32 [1, 3, 64, 64] (random); sr int64 [] = 16000" — said when the floor cannot run them.
std::string describe_inputs(const std::vector<Tensor>& inputs, const InputSpec& spec);

}  // namespace rung
