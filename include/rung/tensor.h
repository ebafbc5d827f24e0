// A tensor rung owns: name, element type, shape and bytes. Inputs it feeds a
// session and outputs it compares are these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rung/result.h"

namespace rung {

enum class ElementType { kFloat, kFloat16, kDouble, kInt8, kUint8, kInt16, kInt32, kInt64, kBool, kUnsupported };
const char* element_type_name(ElementType t);  // "float32", "float16", ...
std::size_t element_size(ElementType t);

// The largest tensor rung makes or reads from a file unless told otherwise
// (--max-tensor-mb, InputSpec::max_tensor_bytes): a shape or a file header
// asking for more is refused before anything is allocated.
inline constexpr std::uint64_t kDefaultMaxTensorBytes = 1ull << 30;

// Elements in a shape, by checked arithmetic: a negative dimension or a
// product beyond 2^63 is an error, never a wrapped or zero count.
Result<std::uint64_t> element_count(const std::vector<std::int64_t>& shape);
// The bytes a tensor of this type and shape holds, when at most `max_bytes`;
// else an error naming `what` ("input 'x'", "page.npy") and its size.
Result<std::uint64_t> tensor_bytes(const std::string& what, ElementType type, const std::vector<std::int64_t>& shape,
                                   std::uint64_t max_bytes);

struct Tensor {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;

  Result<std::uint64_t> element_count() const { return rung::element_count(shape); }
  // Whether `bytes` holds exactly the elements the shape says.
  bool consistent() const;
  // Every element widened to double (float16 decoded), for comparisons.
  std::vector<double> to_doubles() const;
  template <class T>
  std::span<const T> view() const {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

std::string shape_string(const std::vector<std::int64_t>& shape);  // "[1, 3, 64, 64]"

}  // namespace rung
