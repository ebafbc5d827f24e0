#include "rung/input_spec.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "os/json_input.h"
#include "os/read_file.h"

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
  return j.dump();
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
        if (auto s = check_dim_key(d.key()); !s) return s.error();
        auto v = json_integer(*d, 1, INT64_MAX);
        if (!v) {
          return Error{ErrorCode::kInvalidArgument,
                       fmt::format("dims.{} must be a positive whole number, not {}", d.key(), d->dump().substr(0, 40))};
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
      std::filesystem::path p = it->get<std::string>();
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
