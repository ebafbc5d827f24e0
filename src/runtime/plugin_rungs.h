// Plugin execution providers as rungs: any shared library exporting
// CreateEpFactories dropped into a plugin directory (or RUNG_PLUGIN_DIR).
// A plugin is code loaded into rung's processes, so it gets the runtime's
// policy: an absolute path only, and neither the library nor any directory on
// its way may be changeable by another user (os/path_trust.h) unless allowed
// (--allow-writable-plugin, RuntimeSearchOptions::allow_writable_plugins).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/runtime.h"

namespace rung {

// The plugin rungs of these directories and (when `read_environment`: the CLI,
// never an embedded engine, whose rungs run in its application's process)
// RUNG_PLUGIN_DIR, or why one is refused.
Result<std::vector<RungSpec>> plugin_rungs(const std::vector<std::filesystem::path>& plugin_dirs, bool allow_writable = false,
                                           bool read_environment = true);

// One plugin library named by path (parity's rung=/path/x.so), under the same policy.
Status check_plugin_library(const std::filesystem::path& library, bool allow_writable);

// A plugin library's rung name: its file name without the system's prefix and suffix ("rung_sim_ep").
std::string plugin_rung_name(const std::filesystem::path& library);

// Whether a rung as a command line names it is a plugin library (a path, or a
// library's file name: "librung_sim_ep.so") rather than a ladder rung's id.
bool names_a_plugin_library(const std::string& named);

// The full ladder a process walks: plugin rungs above the platform's own rungs
// that this build carries, the CPU last. While a software GPU adapter is lent,
// the rung that runs on it says so ("WebGPU on lavapipe (software)").
Result<std::vector<RungSpec>> effective_ladder(const Hardware& hardware, const RuntimeBuild& build,
                                               const std::vector<std::filesystem::path>& plugin_dirs, bool allow_writable_plugins = false,
                                               bool read_plugin_environment = true);

}  // namespace rung
