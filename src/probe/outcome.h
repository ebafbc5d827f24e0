// The probe's outcome as JSON, both ways (the cache file and `--json`).
#pragma once

#include <nlohmann/json.hpp>

#include "rung/probe.h"

namespace rung {

nlohmann::json outcome_json(const ProbeOutcome& outcome);
// Every field checked for its kind and range; an error names the first that is wrong.
Result<ProbeOutcome> outcome_from_json(const nlohmann::json& j);

}  // namespace rung
