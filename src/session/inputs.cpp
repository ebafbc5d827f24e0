#include "session/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <random>

#include "session/tensor_file.h"

namespace rung {
namespace {

bool batch_like(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return n == "batch" || n == "n" || n == "batch_size" || n == "batchsize" || n == "b";
}

Result<std::vector<std::int64_t>> resolve_shape(const TensorInfo& info, const InputSpec& spec) {
  std::vector<std::int64_t> shape = info.shape;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] >= 0) continue;
    const std::string& sym = axis < info.symbolic_dims.size() ? info.symbolic_dims[axis] : std::string();
    if (auto it = spec.dims.find(fmt::format("{}:{}", info.name, axis)); it != spec.dims.end()) {
      shape[axis] = it->second;
    } else if (auto it2 = spec.dims.find(sym); !sym.empty() && it2 != spec.dims.end()) {
      shape[axis] = it2->second;
    } else if (batch_like(sym) || axis == 0) {
      shape[axis] = kDefaultBatch;
    } else {
      shape[axis] = kDefaultDynamicDim;
    }
  }
  return shape;
}

template <class T>
void fill(Tensor& t, const std::function<T(std::size_t)>& value) {
  auto n = t.element_count();
  t.bytes.resize(n * sizeof(T));
  auto* out = reinterpret_cast<T*>(t.bytes.data());
  for (std::size_t i = 0; i < n; ++i) out[i] = value(i);
}

// Floats are uniform in [0, 1), integers in [0, 4), booleans 0 or 1, strings
// "s0" to "s3"; a spec's constant values are repeated to fill.
Status fill_tensor(Tensor& t, const std::vector<double>* constant, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  auto pick = [&](std::size_t i) -> double { return (*constant)[i % constant->size()]; };
  auto real = [&](std::size_t i) { return constant ? pick(i) : unit(rng); };
  auto whole = [&](std::size_t i) { return constant ? pick(i) : static_cast<double>(small(rng)); };
  switch (t.type) {
    case ElementType::kFloat: fill<float>(t, [&](std::size_t i) { return static_cast<float>(real(i)); }); return {};
    case ElementType::kDouble: fill<double>(t, real); return {};
    case ElementType::kFloat16: fill<std::uint16_t>(t, [&](std::size_t i) { return double_to_half(real(i)); }); return {};
    case ElementType::kBFloat16: fill<std::uint16_t>(t, [&](std::size_t i) { return double_to_bfloat16(real(i)); }); return {};
    case ElementType::kFloat8E4M3FN: case ElementType::kFloat8E4M3FNUZ: case ElementType::kFloat8E5M2:
    case ElementType::kFloat8E5M2FNUZ:
      fill<std::uint8_t>(t, [&](std::size_t i) { return double_to_float8(t.type, real(i)); });
      return {};
    case ElementType::kInt64: fill<std::int64_t>(t, [&](std::size_t i) { return static_cast<std::int64_t>(whole(i)); }); return {};
    case ElementType::kUint64: fill<std::uint64_t>(t, [&](std::size_t i) { return static_cast<std::uint64_t>(whole(i)); }); return {};
    case ElementType::kInt32: fill<std::int32_t>(t, [&](std::size_t i) { return static_cast<std::int32_t>(whole(i)); }); return {};
    case ElementType::kUint32: fill<std::uint32_t>(t, [&](std::size_t i) { return static_cast<std::uint32_t>(whole(i)); }); return {};
    case ElementType::kInt16: fill<std::int16_t>(t, [&](std::size_t i) { return static_cast<std::int16_t>(whole(i)); }); return {};
    case ElementType::kUint16: fill<std::uint16_t>(t, [&](std::size_t i) { return static_cast<std::uint16_t>(whole(i)); }); return {};
    case ElementType::kInt8: fill<std::int8_t>(t, [&](std::size_t i) { return static_cast<std::int8_t>(whole(i)); }); return {};
    case ElementType::kUint8: fill<std::uint8_t>(t, [&](std::size_t i) { return static_cast<std::uint8_t>(whole(i)); }); return {};
    case ElementType::kBool:
      fill<std::uint8_t>(t, [&](std::size_t i) { return static_cast<std::uint8_t>(constant ? pick(i) != 0 : small(rng) & 1); });
      return {};
    case ElementType::kString:
      t.strings.resize(t.element_count());
      for (std::size_t i = 0; i < t.strings.size(); ++i) {
        t.strings[i] = constant ? fmt::format("{}", pick(i)) : fmt::format("s{}", small(rng));
      }
      return {};
    case ElementType::kUnsupported:
      break;
  }
  return Error{ErrorCode::kUnsupported, fmt::format("input '{}' has an element type rung cannot generate", t.name)};
}

}  // namespace

Result<std::vector<Tensor>> make_inputs(const ModelIo& io, const InputSpec& spec, std::uint64_t seed) {
  std::vector<Tensor> recorded;
  if (!spec.tensors_dir.empty()) {
    auto r = read_tensor_directory(spec.tensors_dir);
    if (!r) return r.error();
    recorded = std::move(*r);
  }
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < io.inputs.size(); ++i) {
    const auto& info = io.inputs[i];
    if (!info.is_tensor()) {
      return Error{ErrorCode::kUnsupported, fmt::format("input '{}' is {}; rung generates tensors only: give recorded inputs "
                                                        "(the ONNX test suites' input_N.pb)", info.name, info.describe())};
    }
    if (!recorded.empty()) {
      auto it = std::find_if(recorded.begin(), recorded.end(), [&](const Tensor& t) { return t.name == info.name; });
      const Tensor* found = it != recorded.end() ? &*it : (i < recorded.size() ? &recorded[i] : nullptr);
      if (found != nullptr) {
        Tensor t = *found;
        t.name = info.name;
        if (t.type != info.type) {
          return Error{ErrorCode::kInvalidArgument, fmt::format("recorded tensor for input '{}' is {}, the model wants {}", info.name,
                                                                element_type_name(t.type), element_type_name(info.type))};
        }
        out.push_back(std::move(t));
        continue;
      }
    }
    auto shape = resolve_shape(info, spec);
    if (!shape) return shape.error();
    Tensor t;
    t.name = info.name;
    t.type = info.type;
    t.shape = *shape;
    // One stream per input name: adding an input to a spec leaves the others' bytes alone.
    std::mt19937_64 rng(seed ^ std::hash<std::string>{}(info.name));
    auto v = spec.values.find(info.name);
    if (auto s = fill_tensor(t, v != spec.values.end() ? &v->second : nullptr, rng); !s) return s.error();
    out.push_back(std::move(t));
  }
  return out;
}

std::string describe_inputs(const std::vector<Tensor>& inputs, const InputSpec& spec) {
  std::vector<std::string> parts;
  for (const auto& t : inputs) {
    auto v = spec.values.find(t.name);
    std::string how = v != spec.values.end() ? fmt::format("= {}", v->second.front())
                      : spec.tensors_dir.empty() ? "(random)" : "(recorded)";
    parts.push_back(fmt::format("{} {} {} {}", t.name, element_type_name(t.type), shape_string(t.shape), how));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace rung
