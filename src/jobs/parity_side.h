// One side of a parity comparison, run in its own process as a "parity" job
// with a channel: one ONNX Runtime build, one session, inputs taken one at a
// time over the channel (parity_protocol.h).
#pragma once

#include <nlohmann/json.hpp>

#include "os/line_channel.h"

namespace rung {

// The worker's entry for "parity" jobs: serves requests until the parent closes
// the channel. Its result is ok unless the side could not run.
nlohmann::json parity_job_entry(const nlohmann::json& job, LineChannel* channel);

}  // namespace rung
