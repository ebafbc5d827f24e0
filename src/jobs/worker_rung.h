// The rung a worker is told to run on, as a job names it: "cpu", a ladder
// rung's name (checked against the worker's build), or a plugin EP library's path.
#pragma once

#include <string>

#include "rung/ladder.h"
#include "rung/result.h"
#include "session/session.h"

namespace rung {

Result<RungSpec> resolve_rung(OrtProcess& process, const std::string& name);

}  // namespace rung
