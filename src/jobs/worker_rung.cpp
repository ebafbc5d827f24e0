#include "jobs/worker_rung.h"

#include <fmt/format.h>

#include "rung/standing.h"
#include "runtime/plugin_rungs.h"
#include "rung/path_text.h"

namespace rung {

Result<RungSpec> resolve_rung(OrtProcess& process, const RungSpec& named) {
  if (!named.plugin_library.empty()) {
    auto eps = process.plugin_ep_names(path_from_utf8(named.plugin_library));
    if (!eps) return eps.error();
    // The rung's id is the library's (rung/rung_names.h); its provider is the EP it registers.
    RungSpec rung = plugin_rung(plugin_rung_name(path_from_utf8(named.plugin_library)), named.plugin_library);
    rung.provider = eps->front();
    return rung;
  }
  const RungSpec* rung = find_rung(named.name);
  if (rung == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("unknown rung '{}'", named.name)};
  // Not in the build, or a file of its own absent: the standing's sentence, as every command says it.
  if (std::string why = rung_blocked_reason(*rung, process.build()); !why.empty()) return Error{ErrorCode::kUnsupported, why};
  return *rung;
}

}  // namespace rung
