#include "rung/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

std::size_t Tensor::element_count() const {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d < 0 ? 0 : d);
  return n;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out;
  out.reserve(element_count());
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
