#include "rung/input_spec.h"

#include "os/read_file.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace rung {

std::string InputSpec::canonical() const {
  nlohmann::json j = {{"dims", dims}, {"values", values}, {"tensors", tensors_dir.string()}};
  return j.dump();
}

Result<InputSpec> InputSpec::from_json_text(const std::string& text, const std::filesystem::path& base_dir) {
  InputSpec spec;
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.is_object()) return Error{ErrorCode::kInvalidArgument, "an input spec must be a JSON object"};
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "dims") {
        for (auto d = it->begin(); d != it->end(); ++d) {
          auto v = d->get<std::int64_t>();
          if (v <= 0) return Error{ErrorCode::kInvalidArgument, fmt::format("dims.{} must be positive, not {}", d.key(), v)};
          spec.dims[d.key()] = v;
        }
      } else if (it.key() == "values") {
        for (auto v = it->begin(); v != it->end(); ++v) {
          spec.values[v.key()] = v->is_array() ? v->get<std::vector<double>>() : std::vector<double>{v->get<double>()};
          if (spec.values[v.key()].empty()) {
            return Error{ErrorCode::kInvalidArgument, fmt::format("values.{} is empty", v.key())};
          }
        }
      } else if (it.key() == "tensors") {
        std::filesystem::path p = it->get<std::string>();
        spec.tensors_dir = p.is_relative() && !base_dir.empty() ? base_dir / p : p;
      } else {
        return Error{ErrorCode::kInvalidArgument, fmt::format("unknown key '{}' (expected dims, values, tensors)", it.key())};
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, e.what()};
  }
  return spec;
}

Result<InputSpec> InputSpec::from_json_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return Error{ErrorCode::kNotFound, fmt::format("{}: cannot be read", file.string())};
  auto spec = from_json_text(read_text_file(file), file.parent_path());
  if (!spec) return Error{spec.error().code, fmt::format("{}: {}", file.string(), spec.error().message)};
  return spec;
}

}  // namespace rung
