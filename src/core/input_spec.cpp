#include "rung/input_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "rung/setting_names.h"
#include "rung/path_text.h"

namespace rung {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::int64_t kMaxTensorMb = std::int64_t{1} << 30;  // 1 PiB: beyond it a limit means nothing

// "x:3" names axis 3 of input x; a key with a colon must end in an axis number.
Status check_dim_key(const std::string& key) {
  const auto colon = key.rfind(':');
  if (key.empty()) return Error{ErrorCode::kInvalidArgument, "dims: an empty key names no dimension"};
  if (colon == std::string::npos) return {};
  const std::string axis = key.substr(colon + 1);
  const bool digits = !axis.empty() && axis.size() <= 9 && axis.find_first_not_of("0123456789") == std::string::npos;
  if (colon == 0 || !digits) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("dims: key '{}' is neither a dimension's name nor INPUT:AXIS with AXIS a number (\"x:2\")", key)};
  }
  return {};
}

}  // namespace

std::string InputSpec::canonical() const {
  nlohmann::json j = {{"dims", dims}, {"values", values}, {"tensors", tensors_dir.string()}};
  if (max_tensor_bytes != kDefaultMaxTensorBytes) j["max_tensor_mb"] = max_tensor_bytes / kMiB;
  return json_text(j);
}

Result<InputSpec> InputSpec::from_json_text(const std::string& text, const std::filesystem::path& base_dir) {
  auto parsed = parse_json(text);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return Error{ErrorCode::kInvalidArgument, "an input spec must be a JSON object"};
  InputSpec spec;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "dims") {
      if (!it->is_object()) return Error{ErrorCode::kInvalidArgument, "dims must be an object of dimension sizes"};
      for (auto d = it->begin(); d != it->end(); ++d) {
        RUNG_RETURN_IF_ERROR(check_dim_key(d.key()));
        auto v = json_integer(*d, 1, INT64_MAX);
        if (!v) {
          return Error{ErrorCode::kInvalidArgument,
                       fmt::format("dims.{} must be a positive whole number, not {}", d.key(), json_text(*d).substr(0, 40))};
        }
        spec.dims[d.key()] = *v;
      }
    } else if (it.key() == "values") {
      if (!it->is_object()) return Error{ErrorCode::kInvalidArgument, "values must be an object of input names"};
      for (auto v = it->begin(); v != it->end(); ++v) {
        std::vector<double> numbers;
        for (const auto& x : v->is_array() ? *v : nlohmann::json::array({*v})) {
          auto d = json_finite(x);
          if (!d) return Error{ErrorCode::kInvalidArgument, fmt::format("values.{} must be a number or a list of numbers", v.key())};
          numbers.push_back(*d);
        }
        if (numbers.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("values.{} is empty", v.key())};
        spec.values[v.key()] = std::move(numbers);
      }
    } else if (it.key() == "tensors") {
      if (!it->is_string() || it->get<std::string>().empty()) {
        return Error{ErrorCode::kInvalidArgument, "tensors must be a directory (a string)"};
      }
      const std::filesystem::path p = path_from_utf8(it->get<std::string>());
      spec.tensors_dir = p.is_relative() && !base_dir.empty() ? base_dir / p : p;
    } else if (it.key() == "max_tensor_mb") {
      auto mb = json_integer(*it, 1, kMaxTensorMb);
      if (!mb) return Error{ErrorCode::kInvalidArgument, fmt::format("max_tensor_mb must be a whole number from 1 to {}", kMaxTensorMb)};
      spec.max_tensor_bytes = static_cast<std::uint64_t>(*mb) * kMiB;
    } else {
      return Error{ErrorCode::kInvalidArgument, fmt::format("unknown key '{}' (expected dims, values, tensors, max_tensor_mb)", it.key())};
    }
  }
  return spec;
}

Result<InputSpec> InputSpec::from_json_file(const std::filesystem::path& file) {
  auto text = read_input_file(file, FileKind::kDocument);
  if (!text) return text.error();
  auto spec = from_json_text(*text, file.parent_path());
  if (!spec) return Error{spec.error().code, fmt::format("{}: {}", file.string(), spec.error().message)};
  return spec;
}

}  // namespace rung

namespace rung {

Result<InputShape> parse_input_shape(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} {}: {} (expected INPUT=1x3x640x640)", setting_name(Setting::kShape), text, why)};
  };
  const auto eq = text.rfind('=');
  if (eq == std::string::npos) return bad("no '='");
  InputShape s;
  s.text = text;
  s.input = text.substr(0, eq);
  if (s.input.empty()) return bad("no input name before '='");
  const std::string dims = text.substr(eq + 1);
  if (dims.empty()) return bad("no dimensions after '='");
  std::size_t start = 0;
  while (true) {
    const auto x = dims.find_first_of("xX", start);
    const std::string d = dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (d.empty()) return bad("an empty dimension");
    if (d.find_first_not_of("0123456789") != std::string::npos) return bad(fmt::format("dimension '{}' is not a positive whole number", d));
    if (d.size() > 10 || std::stoll(d) > std::numeric_limits<std::int32_t>::max()) return bad(fmt::format("dimension {} is too large", d));
    const std::int64_t v = std::stoll(d);
    if (v < 1) return bad(fmt::format("dimension {} must be at least 1", d));
    s.dims.push_back(v);
    if (s.dims.size() > 64) return bad("more than 64 dimensions");
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return s;
}

Status apply_input_shape(InputSpec& spec, const InputShape& shape, const std::vector<DeclaredInput>& inputs) {
  auto it = std::find_if(inputs.begin(), inputs.end(), [&](const DeclaredInput& d) { return d.name == shape.input; });
  if (it == inputs.end()) {
    std::vector<std::string> names;
    for (const auto& d : inputs) names.push_back(d.name);
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{} {}: the model has no input '{}' (its inputs: {})", setting_name(Setting::kShape), shape.text, shape.input, fmt::join(names, ", "))};
  }
  if (it->shape.size() != shape.dims.size()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} {}: input '{}' has rank {}, not {}", setting_name(Setting::kShape), shape.text, shape.input,
                                                          it->shape.size(), shape.dims.size())};
  }
  long double bytes = static_cast<long double>(it->element_bytes);
  for (std::size_t a = 0; a < shape.dims.size(); ++a) {
    if (it->shape[a] >= 0 && it->shape[a] != shape.dims[a]) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{} {}: axis {} of input '{}' is fixed at {}, not {}", setting_name(Setting::kShape), shape.text, a,
                                                            shape.input, it->shape[a], shape.dims[a])};
    }
    bytes *= static_cast<long double>(shape.dims[a]);
  }
  if (bytes > static_cast<long double>(spec.max_tensor_bytes)) {
    const std::string raise = setting_name(Setting::kMaxTensorMb);
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{} {}: input '{}' would take {:.0f} MiB, more than the {} MiB allowed{}", setting_name(Setting::kShape), shape.text,
                             shape.input, static_cast<double>(bytes / (1 << 20)), spec.max_tensor_bytes >> 20,
                             raise.empty() ? "" : " (" + raise + ")")};
  }
  for (std::size_t a = 0; a < shape.dims.size(); ++a) {
    if (it->shape[a] < 0) spec.dims[fmt::format("{}:{}", shape.input, a)] = shape.dims[a];
  }
  return {};
}

}  // namespace rung
