// A tensor rung owns: name, element type, shape and bytes. Inputs it feeds a
// session and outputs it compares are these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rung {

enum class ElementType { kFloat, kFloat16, kDouble, kInt8, kUint8, kInt16, kInt32, kInt64, kBool, kUnsupported };
const char* element_type_name(ElementType t);  // "float32", "float16", ...
std::size_t element_size(ElementType t);

struct Tensor {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;

  std::size_t element_count() const;
  // Every element widened to double (float16 decoded), for comparisons.
  std::vector<double> to_doubles() const;
  template <class T>
  std::span<const T> view() const {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

std::string shape_string(const std::vector<std::int64_t>& shape);  // "[1, 3, 64, 64]"

}  // namespace rung
