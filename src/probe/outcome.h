// The probe's outcome as JSON, both ways (the cache file and `--json`).
#pragma once

#include <nlohmann/json.hpp>

#include "rung/probe.h"

namespace rung {

nlohmann::json outcome_json(const ProbeOutcome& outcome);
ProbeOutcome outcome_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a malformed document

}  // namespace rung
