// What a parity side ran, for the report (the side itself is rung/parity.h's ParitySide).
#pragma once

#include <string>

#include "rung/parity.h"

namespace rung {

// What a side ran: its model's hashes, its rung by name, the build's version and
// this device. A side of stored outputs ran nothing: its rung is "expected".
ParitySideRun describe_side_run(const ParitySide& side, const std::string& runtime_version);

}  // namespace rung
