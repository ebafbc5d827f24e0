// A model's inputs and outputs as a session describes them: names, element
// types, shapes and symbolic dimension names. Kept apart from the session so
// code that only reads descriptions never parses ONNX Runtime's C++ header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rung/tensor.h"

namespace rung {

struct TensorInfo {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<std::int64_t> shape;          // -1 where dynamic
  std::vector<std::string> symbolic_dims;   // the dimension names, "" where none
};

struct ModelIo {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
};

}  // namespace rung
