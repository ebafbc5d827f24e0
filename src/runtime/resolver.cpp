#include "runtime/resolver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "rung/hardware.h"
#include "rung/path_text.h"

namespace rung {

Result<const RuntimeDiscovery*> RuntimeResolver::discovery() {
  if (!discovered_) discovered_ = discover_runtimes(search_, detect_hardware("/"));
  if (!discovered_->ok()) return discovered_->error();
  return &discovered_->value();
}

Result<ResolvedRuntime> RuntimeResolver::resolve(const std::string& wanted) {
  std::error_code ec;
  const std::filesystem::path wanted_path = path_from_utf8(wanted);
  if (!wanted.empty() && std::filesystem::exists(wanted_path, ec)) {
    if (std::filesystem::is_regular_file(wanted_path, ec)) {
      auto b = load_runtime_build(wanted_path, search_.allow_writable_by_others);
      if (!b) return Error{ErrorCode::kNoRuntime, b.error().message};
      return ResolvedRuntime{b->library, b->version};
    }
    RuntimeSearchOptions only = search_;
    only.explicit_dir = wanted_path;
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
