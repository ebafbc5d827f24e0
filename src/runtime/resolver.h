// Which ONNX Runtime build a caller names (a parity side, a conform column): the
// one rung would choose, a version among the builds found, or a directory or library path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

struct ResolvedRuntime {
  std::filesystem::path library;
  std::string version;
};

class RuntimeResolver {
 public:
  explicit RuntimeResolver(RuntimeSearchOptions search) : search_(std::move(search)) {}
  // "" (the chosen build), "1.28.2" or "1.29" (a version found), or a path.
  Result<ResolvedRuntime> resolve(const std::string& wanted);

 private:
  Result<const RuntimeDiscovery*> discovery();
  RuntimeSearchOptions search_;
  std::optional<Result<RuntimeDiscovery>> discovered_;
};

}  // namespace rung
