#include "parity/side.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "graph/model_file.h"
#include "rung/hardware.h"
#include "rung/parity.h"
#include "runtime/plugin_rungs.h"

namespace rung {

Result<ParitySide> ParitySide::parse(const std::string& spec) {
  ParitySide side;
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t comma; (comma = spec.find(',', start)) != std::string::npos; start = comma + 1) parts.push_back(spec.substr(start, comma - start));
  parts.push_back(spec.substr(start));
  if (parts[0].empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': a side starts with the model file", spec)};
  side.model = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': expected KEY=VALUE after the model, not '{}'", spec, parts[i])};
    }
    const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    if (key == "rung") {
      side.rung = value;
    } else if (key == "ort") {
      side.runtime = value;
    } else if (key == "threads") {
      try {
        std::size_t used = 0;
        side.threads = std::stoi(value, &used);
        if (used != value.size() || side.threads < 0) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': threads must be a whole number, not '{}'", spec, value)};
      }
    } else if (key.starts_with("option.") && key.size() > 7) {
      side.provider_options[key.substr(7)] = value;
    } else {
      return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': unknown key '{}' (expected rung, ort, threads, option.NAME)", spec, key)};
    }
  }
  if (side.rung.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': rung= needs a value", spec)};
  return side;
}

std::string ParitySide::describe() const {
  std::string s = fmt::format("{} on {}", model.filename().string(), rung.find('/') != std::string::npos ? std::filesystem::path(rung).filename().string() : rung);
  s += runtime.empty() ? ", the chosen ONNX Runtime build" : fmt::format(", ONNX Runtime {}", runtime);
  if (threads > 0) s += fmt::format(", {} thread{}", threads, threads == 1 ? "" : "s");
  for (const auto& [k, v] : provider_options) s += fmt::format(", {}={}", k, v);
  return s;
}

ParitySideRun describe_side_run(const ParitySide& side, const std::string& runtime_version) {
  ParitySideRun run;
  run.model_file = side.model.filename().string();
  if (auto facts = inspect_model_file(side.model)) {
    run.model_sha256 = facts->sha256;
    run.model_stable_sha256 = facts->stable_sha256;
  }
  const bool library = side.rung.find('/') != std::string::npos || side.rung.ends_with(".so");
  run.rung = library ? plugin_rung_name(side.rung) : side.rung;
  run.runtime_version = runtime_version;
  run.device = detect_hardware("/").identity();
  return run;
}

Result<const RuntimeDiscovery*> RuntimeResolver::discovery() {
  if (!discovered_) discovered_ = discover_runtimes(search_, detect_hardware("/"));
  if (!discovered_->ok()) return discovered_->error();
  return &discovered_->value();
}

Result<ResolvedRuntime> RuntimeResolver::resolve(const std::string& wanted) {
  std::error_code ec;
  if (!wanted.empty() && std::filesystem::exists(wanted, ec)) {
    if (std::filesystem::is_regular_file(wanted, ec)) {
      auto b = load_runtime_build(wanted, search_.allow_writable_by_others);
      if (!b) return Error{ErrorCode::kNoRuntime, b.error().message};
      return ResolvedRuntime{b->library, b->version};
    }
    RuntimeSearchOptions only = search_;
    only.explicit_dir = wanted;
    only.include_default_locations = false;
    only.read_environment = false;
    auto d = discover_runtimes(only, detect_hardware("/"));
    if (!d) return Error{ErrorCode::kNoRuntime, d.error().message};
    for (const auto& b : d->builds) {
      if (b.loaded) return ResolvedRuntime{b.library, b.version};
    }
    return Error{ErrorCode::kNoRuntime, fmt::format("{}: holds no usable ONNX Runtime build", wanted)};
  }
  auto d = discovery();
  if (!d) return d.error();  // a bad --ort-dir is the caller's; finding no build is kNoRuntime
  if (wanted.empty()) {
    const RuntimeBuild* b = (*d)->chosen_build();
    if (b == nullptr) return Error{ErrorCode::kNoRuntime, "no usable ONNX Runtime build was found"};
    return ResolvedRuntime{b->library, b->version};
  }
  std::vector<std::string> versions;
  for (const auto& b : (*d)->builds) {
    if (!b.loaded) continue;
    if (b.version == wanted || b.version.starts_with(wanted + ".")) return ResolvedRuntime{b.library, b.version};
    versions.push_back(b.version);
  }
  return Error{ErrorCode::kNoRuntime, fmt::format("no ONNX Runtime {} among the builds found ({}); name a directory or library instead",
                                                   wanted, versions.empty() ? "none" : fmt::format("{}", fmt::join(versions, ", ")))};
}

}  // namespace rung
