// Plugin execution providers as rungs: any shared library exporting
// CreateEpFactories dropped into a plugin directory (or RUNG_PLUGIN_DIR).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/runtime.h"

namespace rung {

std::vector<RungSpec> plugin_rungs(const std::vector<std::filesystem::path>& plugin_dirs);

// A plugin library's rung name: its file name without "lib" and ".so" ("rung_sim_ep").
std::string plugin_rung_name(const std::filesystem::path& library);

// The full ladder a process walks: plugin rungs above the platform's own rungs
// that this build carries, the CPU last. While a software GPU adapter is lent,
// the rung that runs on it says so ("WebGPU on lavapipe (software)").
std::vector<RungSpec> effective_ladder(const Hardware& hardware, const RuntimeBuild& build,
                                       const std::vector<std::filesystem::path>& plugin_dirs);

}  // namespace rung
