#include "session/inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <limits>
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

// The tensor's bytes were sized by make_tensor; fill writes every element.
template <class T>
void fill(Tensor& t, const std::function<T(std::size_t)>& value) {
  auto* out = reinterpret_cast<T*>(t.bytes.data());
  const std::size_t n = t.bytes.size() / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) out[i] = value(i);
}

Error cannot_generate(const std::string& input) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("input '{}' has an element type rung cannot generate: give it a tensor file", input)};
}

// A spec's value as the element type: saturated at the type's range, never cast out of it.
template <class T>
T saturate(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max())));
  } else {
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Floats are uniform in [0, 1), integers in [0, 4), booleans 0 or 1, strings
// "s0" to "s3"; a spec's constant values are repeated to fill,
// saturated at the type's range, never cast out of it.
Status fill_tensor(Tensor& t, const std::vector<double>* constant, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  auto pick = [&](std::size_t i) -> double { return (*constant)[i % constant->size()]; };
  auto real = [&](std::size_t i) { return constant ? pick(i) : unit(rng); };
  auto whole = [&](std::size_t i) { return constant ? pick(i) : static_cast<double>(small(rng)); };
  switch (t.type) {
    case ElementType::kFloat: fill<float>(t, [&](std::size_t i) { return saturate<float>(real(i)); }); return {};
    case ElementType::kDouble: fill<double>(t, real); return {};
    case ElementType::kFloat16: fill<std::uint16_t>(t, [&](std::size_t i) { return double_to_half(real(i)); }); return {};
    case ElementType::kBFloat16: fill<std::uint16_t>(t, [&](std::size_t i) { return double_to_bfloat16(real(i)); }); return {};
    case ElementType::kFloat8E4M3FN: case ElementType::kFloat8E4M3FNUZ: case ElementType::kFloat8E5M2:
    case ElementType::kFloat8E5M2FNUZ:
      fill<std::uint8_t>(t, [&](std::size_t i) { return double_to_float8(t.type, real(i)); });
      return {};
    case ElementType::kInt64: fill<std::int64_t>(t, [&](std::size_t i) { return saturate<std::int64_t>(whole(i)); }); return {};
    case ElementType::kUint64: fill<std::uint64_t>(t, [&](std::size_t i) { return saturate<std::uint64_t>(whole(i)); }); return {};
    case ElementType::kInt32: fill<std::int32_t>(t, [&](std::size_t i) { return saturate<std::int32_t>(whole(i)); }); return {};
    case ElementType::kUint32: fill<std::uint32_t>(t, [&](std::size_t i) { return saturate<std::uint32_t>(whole(i)); }); return {};
    case ElementType::kInt16: fill<std::int16_t>(t, [&](std::size_t i) { return saturate<std::int16_t>(whole(i)); }); return {};
    case ElementType::kUint16: fill<std::uint16_t>(t, [&](std::size_t i) { return saturate<std::uint16_t>(whole(i)); }); return {};
    case ElementType::kInt8: fill<std::int8_t>(t, [&](std::size_t i) { return saturate<std::int8_t>(whole(i)); }); return {};
    case ElementType::kUint8: fill<std::uint8_t>(t, [&](std::size_t i) { return saturate<std::uint8_t>(whole(i)); }); return {};
    case ElementType::kBool:
      fill<std::uint8_t>(t, [&](std::size_t i) { return static_cast<std::uint8_t>(constant ? pick(i) != 0 : small(rng) & 1); });
      return {};
    case ElementType::kString:
      t.strings.resize(static_cast<std::size_t>(*t.element_count()));
      for (std::size_t i = 0; i < t.strings.size(); ++i) {
        t.strings[i] = constant ? fmt::format("{}", pick(i)) : fmt::format("s{}", small(rng));
      }
      return {};
    case ElementType::kUnsupported:
      break;
  }
  return cannot_generate(t.name);
}

// A tensor of the input's resolved shape with its bytes allocated, when within the spec's limit.
Result<Tensor> make_tensor(const TensorInfo& info, const InputSpec& spec) {
  auto shape = resolve_shape(info, spec);
  if (!shape) return shape.error();
  auto bytes = tensor_bytes(fmt::format("input '{}'", info.name), info.type, *shape, spec.max_tensor_bytes);
  if (!bytes) return bytes.error();
  Tensor t;
  t.name = info.name;
  t.type = info.type;
  t.shape = std::move(*shape);
  if (t.type == ElementType::kUnsupported) {
    return cannot_generate(t.name);
  }
  t.bytes.resize(*bytes);
  return t;
}

std::string input_names(const ModelIo& io) {
  std::vector<std::string> n;
  for (const auto& i : io.inputs) n.push_back("'" + i.name + "'");
  return fmt::format("{}", fmt::join(n, ", "));
}

// "x: batch, height; y: none" — the symbolic dimensions a dims key may name.
std::string describe_symbols(const ModelIo& io) {
  std::vector<std::string> parts;
  for (const auto& i : io.inputs) {
    std::vector<std::string> syms;
    for (const auto& s : i.symbolic_dims) {
      if (!s.empty()) syms.push_back(s);
    }
    parts.push_back(fmt::format("{}: {}", i.name, syms.empty() ? "none" : fmt::format("{}", fmt::join(syms, ", "))));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

Status check_input_spec(const ModelIo& io, const InputSpec& spec) {
  auto input = [&](const std::string& name) {
    return std::find_if(io.inputs.begin(), io.inputs.end(), [&](const TensorInfo& t) { return t.name == name; });
  };
  const std::string inputs = input_names(io);
  for (const auto& [key, size] : spec.dims) {
    const auto colon = key.rfind(':');
    if (colon != std::string::npos) {
      const std::string name = key.substr(0, colon);
      const auto it = input(name);
      if (it == io.inputs.end()) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("input spec: dims key '{}' names input '{}', which the model does not have (its inputs: {})",
                                                              key, name, inputs)};
      }
      // check_dim_key let only digits through, at most nine of them.
      const auto axis = std::stoul(key.substr(colon + 1));
      if (axis >= it->shape.size()) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("input spec: dims key '{}': input '{}' has {} axes ({}), so no axis {}", key, name,
                                                              it->shape.size(), shape_string(it->shape), axis)};
      }
      if (it->shape[axis] >= 0 && it->shape[axis] != size) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("input spec: dims key '{}' asks for {}, but axis {} of input '{}' is fixed at {}", key,
                                                              size, axis, name, it->shape[axis])};
      }
      continue;
    }
    const bool symbolic = std::any_of(io.inputs.begin(), io.inputs.end(), [&dim = key](const TensorInfo& t) {
      return std::find(t.symbolic_dims.begin(), t.symbolic_dims.end(), dim) != t.symbolic_dims.end();
    });
    if (!symbolic) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("input spec: dims key '{}' is no symbolic dimension of the model's inputs ({}); "
                                                            "name an axis as INPUT:AXIS", key, describe_symbols(io))};
    }
  }
  for (const auto& [name, v] : spec.values) {
    if (input(name) == io.inputs.end()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("input spec: values key '{}' is not an input of the model (its inputs: {})", name, inputs)};
    }
  }
  return {};
}

Result<std::vector<Tensor>> generate_inputs(const std::vector<TensorInfo>& infos, const InputSpec& spec, std::uint64_t seed) {
  std::vector<Tensor> out;
  for (const auto& info : infos) {
    auto t = make_tensor(info, spec);
    if (!t) return t.error();
    // One stream per input name: adding an input to a spec leaves the others' bytes alone.
    std::mt19937_64 rng(seed ^ std::hash<std::string>{}(info.name));
    auto v = spec.values.find(info.name);
    RUNG_RETURN_IF_ERROR(fill_tensor(*t, v != spec.values.end() ? &v->second : nullptr, rng));
    out.push_back(std::move(*t));
  }
  return out;
}

Result<std::vector<Tensor>> make_inputs(const ModelIo& io, const InputSpec& spec, std::uint64_t seed) {
  RUNG_RETURN_IF_ERROR(check_input_spec(io, spec));
  std::vector<Tensor> recorded;
  if (!spec.tensors_dir.empty()) {
    auto r = read_tensor_directory(spec.tensors_dir, spec.max_tensor_bytes);
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
    auto made = generate_inputs({info}, spec, seed);
    if (!made) return made.error();
    out.push_back(std::move(made->front()));
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
