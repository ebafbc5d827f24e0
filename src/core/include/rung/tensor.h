// A tensor rung owns: name, element type, shape and bytes (or strings). Inputs
// it feeds a session and outputs it compares are these; a Value adds ONNX's
// sequence and optional types around them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rung/result.h"

namespace rung {

// Every tensor element type ONNX Runtime computes with.
enum class ElementType {
  kFloat, kFloat16, kBFloat16, kDouble,
  kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ,
  kInt8, kUint8, kInt16, kUint16, kInt32, kUint32, kInt64, kUint64,
  kBool, kString,
  kUnsupported,
};
const char* element_type_name(ElementType t);  // "float32", "bfloat16", "float8e4m3fn", "uint64", "string", ...
std::optional<ElementType> element_type_from_name(std::string_view name);
std::size_t element_size(ElementType t);  // bytes per element; 0 for strings, which Tensor::strings holds
bool is_floating_point(ElementType t);

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
  std::vector<std::byte> bytes;       // every type but strings: the elements, little-endian, C order
  std::vector<std::string> strings;   // strings: one per element, C order

  Result<std::uint64_t> element_count() const { return rung::element_count(shape); }
  // Every element widened to double (float16, bfloat16 and float8 decoded); empty for strings.
  std::vector<double> to_doubles() const;
  // Whether bytes (or strings) hold exactly element_count() elements of `type`.
  bool consistent() const;
  template <class T>
  std::span<const T> view() const {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }
};

// A tensor whose elements its owner lends: fed to ONNX Runtime in place, never
// copied (the C ABI's inputs, which view the caller's memory). The owner keeps
// `data` (or `strings`) alive and unchanged until the run returns.
struct InputView {
  std::string name;
  ElementType type = ElementType::kFloat;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;                        // every type but strings
  std::size_t size = 0;                              // bytes at data
  const std::vector<std::string>* strings = nullptr;  // strings: one per element
  static InputView of(const Tensor& t);               // a view of t's own storage
  // Whether it holds exactly as many elements as its shape.
  bool consistent() const;
};

// ONNX's other value types around tensors: a sequence of values, or an optional
// value that is either None or holds one.
struct Value {
  enum class Kind { kTensor, kSequence, kOptional };
  Kind kind = Kind::kTensor;
  std::string name;
  Tensor tensor;             // kTensor
  std::vector<Value> items;  // kSequence: the elements; kOptional: none (None) or the one held

  static Value of(Tensor t);
  static Value sequence(std::string name, std::vector<Value> items);
  static Value optional(std::string name, std::optional<Value> held);
  // "float32 [2, 3]", "sequence of 3 (float32 [2])", "optional None", "optional (int64 [4])"
  std::string describe() const;
};

std::string shape_string(const std::vector<std::int64_t>& shape);  // "[1, 3, 64, 64]"

// Conversions of the narrow float formats, for generating inputs and comparing.
double half_to_double(std::uint16_t bits);
std::uint16_t double_to_half(double v);
double bfloat16_to_double(std::uint16_t bits);
std::uint16_t double_to_bfloat16(double v);
double float8_to_double(ElementType type, std::uint8_t bits);
std::uint8_t double_to_float8(ElementType type, double v);  // nearest representable (saturating)

}  // namespace rung
