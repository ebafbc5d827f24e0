#include "jobs/worker_rung.h"

#include <fmt/format.h>

namespace rung {

Result<RungSpec> resolve_rung(OrtProcess& process, const std::string& name) {
  const bool is_library = name.find('/') != std::string::npos || name.ends_with(".so");
  if (is_library) {
    auto eps = process.plugin_ep_names(name);
    if (!eps) return eps.error();
    return plugin_rung(eps->front(), name);
  }
  const RungSpec* rung = find_rung(name);
  if (rung == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("unknown rung '{}'", name)};
  if (!rung->provider.empty() && rung->append != AppendMethod::kNone && !process.build().has_provider(rung->provider)) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX Runtime {} at {} does not carry {}", process.build().version,
                                                      process.build().library.string(), rung->provider)};
  }
  return *rung;
}

}  // namespace rung
