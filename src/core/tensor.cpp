#include "rung/tensor.h"

#include "os/read_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>

#include "core/onnx_types.h"
#include "rung/setting_names.h"

namespace rung {
namespace {

struct TypeRow {
  ElementType type;
  const char* name;
  std::size_t size;
  int onnx;  // TensorProto.DataType, which ONNX Runtime's element type enum shares
};

// ONNX's numbering: 1 float, 2 uint8, 3 int8, 4 uint16, 5 int16, 6 int32, 7 int64, 8 string, 9 bool,
// 10 float16, 11 double, 12 uint32, 13 uint64, 16 bfloat16, 17-20 the float8 formats.
constexpr std::array<TypeRow, 18> kTypes{{
    {ElementType::kFloat, "float32", 4, 1},
    {ElementType::kFloat16, "float16", 2, 10},
    {ElementType::kBFloat16, "bfloat16", 2, 16},
    {ElementType::kDouble, "float64", 8, 11},
    {ElementType::kFloat8E4M3FN, "float8e4m3fn", 1, 17},
    {ElementType::kFloat8E4M3FNUZ, "float8e4m3fnuz", 1, 18},
    {ElementType::kFloat8E5M2, "float8e5m2", 1, 19},
    {ElementType::kFloat8E5M2FNUZ, "float8e5m2fnuz", 1, 20},
    {ElementType::kInt8, "int8", 1, 3},
    {ElementType::kUint8, "uint8", 1, 2},
    {ElementType::kInt16, "int16", 2, 5},
    {ElementType::kUint16, "uint16", 2, 4},
    {ElementType::kInt32, "int32", 4, 6},
    {ElementType::kUint32, "uint32", 4, 12},
    {ElementType::kInt64, "int64", 8, 7},
    {ElementType::kUint64, "uint64", 8, 13},
    {ElementType::kBool, "bool", 1, 9},
    {ElementType::kString, "string", 0, 8},
}};

const TypeRow* row_of(ElementType t) {
  for (const auto& r : kTypes) {
    if (r.type == t) return &r;
  }
  return nullptr;
}

// The float8 formats: exponent and mantissa widths, bias, and how they spell NaN and infinity.
struct Float8Format {
  int mantissa_bits;
  int bias;
  bool nan_is_negative_zero;  // the FNUZ formats: 0x80 is their only NaN, and there is no -0
  bool has_infinity;          // E5M2 alone, IEEE-style
};

Float8Format float8_format(ElementType t) {
  switch (t) {
    case ElementType::kFloat8E4M3FN: return {3, 7, false, false};
    case ElementType::kFloat8E4M3FNUZ: return {3, 8, true, false};
    case ElementType::kFloat8E5M2: return {2, 15, false, true};
    default: return {2, 16, true, false};  // kFloat8E5M2FNUZ
  }
}

template <class T>
void widen(const Tensor& t, std::vector<double>& out) {
  for (T x : t.view<T>()) out.push_back(static_cast<double>(x));
}

// Every finite float8 value with its code, sorted by value: the nearest is a binary search away.
const std::vector<std::pair<double, std::uint8_t>>& float8_table(ElementType t) {
  static std::array<std::vector<std::pair<double, std::uint8_t>>, 4> tables;
  const auto index = static_cast<std::size_t>(static_cast<int>(t) - static_cast<int>(ElementType::kFloat8E4M3FN));
  auto& table = tables[index];
  static std::once_flag once[4];
  std::call_once(once[index], [&] {
    for (int code = 0; code < 256; ++code) {
      const double v = float8_to_double(t, static_cast<std::uint8_t>(code));
      if (std::isfinite(v)) table.emplace_back(v, static_cast<std::uint8_t>(code));
    }
    std::stable_sort(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  });
  return table;
}

}  // namespace

const char* element_type_name(ElementType t) {
  const TypeRow* r = row_of(t);
  return r != nullptr ? r->name : "unsupported";
}

std::optional<ElementType> element_type_from_name(std::string_view name) {
  for (const auto& r : kTypes) {
    if (name == r.name) return r.type;
  }
  return std::nullopt;
}

std::size_t element_size(ElementType t) {
  const TypeRow* r = row_of(t);
  return r != nullptr ? r->size : 0;
}

bool is_floating_point(ElementType t) {
  switch (t) {
    case ElementType::kFloat: case ElementType::kFloat16: case ElementType::kBFloat16: case ElementType::kDouble:
    case ElementType::kFloat8E4M3FN: case ElementType::kFloat8E4M3FNUZ: case ElementType::kFloat8E5M2:
    case ElementType::kFloat8E5M2FNUZ:
      return true;
    default:
      return false;
  }
}

int onnx_data_type(ElementType t) {
  const TypeRow* r = row_of(t);
  return r != nullptr ? r->onnx : 0;
}

ElementType element_type_from_onnx(int code) {
  for (const auto& r : kTypes) {
    if (r.onnx == code) return r.type;
  }
  return ElementType::kUnsupported;
}

std::string onnx_data_type_name(int code) {
  if (auto t = element_type_from_onnx(code); t != ElementType::kUnsupported) return element_type_name(t);
  switch (code) {
    case 0: return "undefined";
    case 14: return "complex64";
    case 15: return "complex128";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "uint2";
    case 25: return "int2";
    case 26: return "float8e8m0";
    default: return fmt::format("an element type unknown to rung (ONNX data type {})", code);
  }
}

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

std::uint16_t double_to_half(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t abs = x & 0x7fffffff;
  if (abs > 0x7f800000) return static_cast<std::uint16_t>(sign | 0x7e00);  // NaN
  if (abs >= 0x477ff000) return static_cast<std::uint16_t>(sign | 0x7c00);  // rounds past 65504: infinity
  if (abs < 0x38800000) {  // below 2^-14: a subnormal half, in units of 2^-24, rounded to even
    float a;
    std::memcpy(&a, &abs, 4);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  std::uint32_t h = ((abs >> 23) - 127 + 15) << 10 | (abs & 0x7fffff) >> 13;
  const std::uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is right too
  return static_cast<std::uint16_t>(sign | h);
}

double bfloat16_to_double(std::uint16_t bits) {
  const std::uint32_t x = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::uint16_t double_to_bfloat16(double v) {
  const float f = static_cast<float>(v);
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<std::uint16_t>((x >> 16) | 0x40);  // NaN stays NaN
  return static_cast<std::uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

double float8_to_double(ElementType t, std::uint8_t bits) {
  const Float8Format f = float8_format(t);
  const int exponent_bits = 7 - f.mantissa_bits;
  const int sign = bits >> 7;
  const int exponent = (bits >> f.mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  if (f.nan_is_negative_zero && bits == 0x80) return std::nan("");
  const int top = (1 << exponent_bits) - 1;
  if (f.has_infinity && exponent == top) return mantissa == 0 ? (sign ? -INFINITY : INFINITY) : std::nan("");
  if (!f.has_infinity && !f.nan_is_negative_zero && exponent == top && mantissa == (1 << f.mantissa_bits) - 1) {
    return std::nan("");  // E4M3FN: S.1111.111
  }
  const double v = exponent == 0 ? std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits)
                                 : std::ldexp(mantissa + (1 << f.mantissa_bits), exponent - f.bias - f.mantissa_bits);
  return sign ? -v : v;
}

std::uint8_t double_to_float8(ElementType t, double v) {
  const Float8Format f = float8_format(t);
  if (std::isnan(v)) return f.nan_is_negative_zero ? 0x80 : (f.has_infinity ? 0x7e : 0x7f);
  const auto& table = float8_table(t);
  auto it = std::lower_bound(table.begin(), table.end(), v, [](const auto& e, double x) { return e.first < x; });
  if (it == table.end()) return std::prev(it)->second;
  if (it == table.begin()) return it->second;
  const auto below = std::prev(it);
  return v - below->first < it->first - v ? below->second : it->second;
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
    const std::string raise = setting_name(Setting::kMaxTensorMb);
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: {} {} would take {}, above the limit of {} for one tensor{}", what,
                             element_type_name(type), shape_string(shape), overflow ? "more than 16.0 EiB" : byte_size_text(bytes),
                             byte_size_text(max_bytes), raise.empty() ? "" : " (raise it with " + raise + ")")};
  }
  return bytes;
}

bool Tensor::consistent() const {
  auto n = element_count();
  if (!n) return false;
  if (type == ElementType::kString) return bytes.empty() && strings.size() == *n;
  return type != ElementType::kUnsupported && strings.empty() && *n <= bytes.size() && *n * element_size(type) == bytes.size();
}

InputView InputView::of(const Tensor& t) {
  InputView v{t.name, t.type, t.shape, t.bytes.data(), t.bytes.size(), nullptr};
  if (t.type == ElementType::kString) v.strings = &t.strings;
  return v;
}

bool InputView::consistent() const {
  auto n = rung::element_count(shape);
  if (!n) return false;
  if (type == ElementType::kString) return size == 0 && strings != nullptr && strings->size() == *n;
  return type != ElementType::kUnsupported && strings == nullptr && *n <= size && *n * element_size(type) == size &&
         (data != nullptr || size == 0);
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
    case ElementType::kUint16: widen<std::uint16_t>(*this, out); break;
    case ElementType::kInt32: widen<std::int32_t>(*this, out); break;
    case ElementType::kUint32: widen<std::uint32_t>(*this, out); break;
    case ElementType::kInt64: widen<std::int64_t>(*this, out); break;
    case ElementType::kUint64: widen<std::uint64_t>(*this, out); break;
    case ElementType::kFloat16:
      for (auto h : view<std::uint16_t>()) out.push_back(half_to_double(h));
      break;
    case ElementType::kBFloat16:
      for (auto h : view<std::uint16_t>()) out.push_back(bfloat16_to_double(h));
      break;
    case ElementType::kFloat8E4M3FN: case ElementType::kFloat8E4M3FNUZ: case ElementType::kFloat8E5M2:
    case ElementType::kFloat8E5M2FNUZ:
      for (auto b : view<std::uint8_t>()) out.push_back(float8_to_double(type, b));
      break;
    case ElementType::kString: case ElementType::kUnsupported: break;
  }
  return out;
}

Value Value::of(Tensor t) {
  Value v;
  v.name = t.name;
  v.tensor = std::move(t);
  return v;
}

Value Value::sequence(std::string name, std::vector<Value> items) {
  Value v;
  v.kind = Kind::kSequence;
  v.name = std::move(name);
  v.items = std::move(items);
  return v;
}

Value Value::optional(std::string name, std::optional<Value> held) {
  Value v;
  v.kind = Kind::kOptional;
  v.name = std::move(name);
  if (held) v.items.push_back(std::move(*held));
  return v;
}

std::string Value::describe() const {
  switch (kind) {
    case Kind::kTensor: return fmt::format("{} {}", element_type_name(tensor.type), shape_string(tensor.shape));
    case Kind::kSequence:
      if (items.empty()) return "empty sequence";
      return fmt::format("sequence of {} ({}{})", items.size(), items.front().describe(), items.size() > 1 ? ", ..." : "");
    case Kind::kOptional:
      return items.empty() ? "optional None" : fmt::format("optional ({})", items.front().describe());
  }
  return "?";
}

std::string shape_string(const std::vector<std::int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace rung
