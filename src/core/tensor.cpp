#include "rung/tensor.h"

#include "os/read_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

namespace rung {
namespace {

double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa ? std::nan("") : INFINITY;
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -v : v;
}

template <class T>
void widen(const Tensor& t, std::vector<double>& out) {
  for (T x : t.view<T>()) out.push_back(static_cast<double>(x));
}

}  // namespace

const char* element_type_name(ElementType t) {
  switch (t) {
    case ElementType::kFloat: return "float32";
    case ElementType::kFloat16: return "float16";
    case ElementType::kDouble: return "float64";
    case ElementType::kInt8: return "int8";
    case ElementType::kUint8: return "uint8";
    case ElementType::kInt16: return "int16";
    case ElementType::kInt32: return "int32";
    case ElementType::kInt64: return "int64";
    case ElementType::kBool: return "bool";
    case ElementType::kUnsupported: return "unsupported";
  }
  return "?";
}

std::size_t element_size(ElementType t) {
  switch (t) {
    case ElementType::kFloat: case ElementType::kInt32: return 4;
    case ElementType::kFloat16: case ElementType::kInt16: return 2;
    case ElementType::kDouble: case ElementType::kInt64: return 8;
    case ElementType::kInt8: case ElementType::kUint8: case ElementType::kBool: return 1;
    case ElementType::kUnsupported: return 0;
  }
  return 0;
}

Result<std::uint64_t> element_count(const std::vector<std::int64_t>& shape) {
  std::uint64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return Error{ErrorCode::kInvalidArgument, fmt::format("shape {} has a negative dimension", shape_string(shape))};
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n) || n > static_cast<std::uint64_t>(INT64_MAX)) {
      // Zero anywhere makes the product zero, overflow or not.
      if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return std::uint64_t{0};
      return Error{ErrorCode::kInvalidArgument, fmt::format("shape {} has more than 2^63 elements", shape_string(shape))};
    }
  }
  return n;
}

Result<std::uint64_t> tensor_bytes(const std::string& what, ElementType type, const std::vector<std::int64_t>& shape,
                                   std::uint64_t max_bytes) {
  auto n = element_count(shape);
  if (!n) return Error{n.error().code, fmt::format("{}: {}", what, n.error().message)};
  std::uint64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(*n, static_cast<std::uint64_t>(element_size(type)), &bytes);
  if (overflow || bytes > max_bytes) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: {} {} would take {}, above the limit of {} for one tensor (raise it with --max-tensor-mb)", what,
                             element_type_name(type), shape_string(shape), overflow ? "more than 16.0 EiB" : byte_size_text(bytes),
                             byte_size_text(max_bytes))};
  }
  return bytes;
}

bool Tensor::consistent() const {
  auto n = element_count();
  return n && *n <= bytes.size() && *n * element_size(type) == bytes.size();
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out;
  out.reserve(bytes.size() / std::max<std::size_t>(element_size(type), 1));
  switch (type) {
    case ElementType::kFloat: widen<float>(*this, out); break;
    case ElementType::kDouble: widen<double>(*this, out); break;
    case ElementType::kInt8: widen<std::int8_t>(*this, out); break;
    case ElementType::kUint8: widen<std::uint8_t>(*this, out); break;
    case ElementType::kBool: widen<std::uint8_t>(*this, out); break;
    case ElementType::kInt16: widen<std::int16_t>(*this, out); break;
    case ElementType::kInt32: widen<std::int32_t>(*this, out); break;
    case ElementType::kInt64: widen<std::int64_t>(*this, out); break;
    case ElementType::kFloat16:
      for (auto h : view<std::uint16_t>()) out.push_back(half_to_double(h));
      break;
    case ElementType::kUnsupported: break;
  }
  return out;
}

std::string shape_string(const std::vector<std::int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace rung
