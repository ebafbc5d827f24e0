// Which rungs run on a lent software GPU adapter (rung/software_gpu.h), and
// what they are called then.
#pragma once

#include <string>
#include <vector>

#include "rung/ladder.h"
#include "rung/software_gpu.h"

namespace rung {

// The WebGPU rung's name while the adapter is lent: "WebGPU on lavapipe (software)";
// every other rung's display name unchanged.
std::string adapter_display(const RungSpec& rung);
void name_software_adapter(std::vector<RungSpec>& rungs);

}  // namespace rung
