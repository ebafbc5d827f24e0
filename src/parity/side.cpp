// A parity side as the command line names it: MODEL[,rung=R][,ort=V][,threads=N][,option.K=V].
#include "rung/parity.h"

#include <fmt/format.h>

#include "graph/model_file.h"
#include "jobs/target.h"
#include "parity/side.h"
#include "rung/cpus.h"
#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/rung_names.h"
#include "runtime/plugin_rungs.h"

namespace rung {

Result<ParitySide> ParitySide::parse(const std::string& spec) {
  ParitySide side;
  if (spec.starts_with("expected:")) {
    side.expected = spec.substr(9);
    if (side.expected.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': expected: needs the directory of stored outputs", spec)};
    return side;
  }
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
      if (std::string why = unknown_rung_reason(value); !value.empty() && !why.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': {}", spec, why)};
      side.rung = names_a_plugin_library(value) ? value : canonical_rung_name(value);  // "CUDA" is the rung cuda
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
      if (const int cpus = usable_cpus(); side.threads > cpus) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': threads={} is more than the {} logical CPU{} this machine gives rung "
                                                              "(0, the default, to {})", spec, side.threads, cpus, cpus == 1 ? "" : "s", cpus)};
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
  if (stored()) return fmt::format("the outputs stored in {}", expected.string());
  std::string s = fmt::format("{} on {}", model.filename().string(), rung_display_name(rung));
  s += runtime.empty() ? ", the chosen ONNX Runtime build" : fmt::format(", ONNX Runtime {}", runtime);
  if (threads > 0) s += fmt::format(", {} thread{}", threads, threads == 1 ? "" : "s");
  for (const auto& [k, v] : provider_options) s += fmt::format(", {}={}", k, v);
  return s;
}

ParitySideRun describe_side_run(const ParitySide& side, const std::string& runtime_version) {
  ParitySideRun run;
  if (side.stored()) {  // nothing ran: the outputs were stored elsewhere
    run.model_file = side.expected.filename().string();
    run.rung = "expected";
    return run;
  }
  run.model_file = side.model.filename().string();
  if (auto facts = inspect_model_file(side.model)) {
    run.model_sha256 = facts->sha256;
    run.model_stable_sha256 = facts->stable_sha256;
  }
  run.rung = rung_id(side.rung);
  run.runtime_version = runtime_version;
  run.device = detect_hardware("/").identity();
  return run;
}

}  // namespace rung
