// Which ONNX Runtime build a parity side names: the one rung would choose, a
// version among the builds found, or a directory or library path.
#pragma once

#include <filesystem>
#include <string>

#include "rung/parity.h"
#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

struct ResolvedRuntime {
  std::filesystem::path library;
  std::string version;
};

// What a side ran: its model's hashes, its rung by name, the build's version and this device.
ParitySideRun describe_side_run(const ParitySide& side, const std::string& runtime_version);

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
