// The rung a worker is told to run on, as a job's target names it: by name in
// rung.name ("cpu", a ladder rung's name, checked against the worker's build),
// or a plugin EP library in rung.plugin_library. Parity sides and conform
// columns name rungs the same way.
#pragma once

#include "rung/ladder.h"
#include "rung/result.h"
#include "session/session.h"

namespace rung {

// The rung completed on the loaded build.
Result<RungSpec> resolve_rung(OrtProcess& process, const RungSpec& named);

}  // namespace rung
