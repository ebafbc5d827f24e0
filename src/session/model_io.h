// A model's inputs and outputs as a session describes them: names, element
// types, shapes and symbolic dimension names, and what wraps a tensor when the
// model takes or gives a sequence or an optional value. Kept apart from the
// session so code that only reads descriptions never parses ONNX Runtime's C++ header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rung/tensor.h"

namespace rung {

struct TensorInfo {
  std::string name;
  ElementType type = ElementType::kFloat;   // the tensor's, or the one inside a sequence or optional
  std::vector<std::int64_t> shape;          // -1 where dynamic
  std::vector<std::string> symbolic_dims;   // the dimension names, "" where none
  // What wraps the tensor, outermost first: none for a plain tensor, {kSequence}
  // for a sequence of tensors, {kOptional, kSequence} for an optional sequence.
  std::vector<Value::Kind> wrappers;
  std::string other;                        // a type rung does not hold ("map", "sparse tensor", "opaque"); "" otherwise

  bool is_tensor() const { return wrappers.empty() && other.empty(); }
  Value::Kind kind() const { return wrappers.empty() ? Value::Kind::kTensor : wrappers.front(); }
  // "float32 [1, 3, -1]", "sequence of float32 [-1]", "optional int64 [2]", "map"
  std::string describe() const;
};

struct ModelIo {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

}  // namespace rung
