#include "jobs/worker_rung.h"

#include <fmt/format.h>

namespace rung {

Result<RungSpec> resolve_rung(OrtProcess& process, const RungSpec& named) {
  if (!named.plugin_library.empty()) {
    auto eps = process.plugin_ep_names(named.plugin_library);
    if (!eps) return eps.error();
    return plugin_rung(eps->front(), named.plugin_library);
  }
  const RungSpec* rung = find_rung(named.name);
  if (rung == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("unknown rung '{}'", named.name)};
  if (!rung->provider.empty() && rung->append != AppendMethod::kNone && !process.build().has_provider(rung->provider)) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX Runtime {} at {} does not carry {}", process.build().version,
                                                      process.build().library.string(), rung->provider)};
  }
  return *rung;
}

}  // namespace rung
