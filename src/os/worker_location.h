// Where the rung-probe-worker executable is: the isolation of every measurement
// (probe, bench, parity) runs through it.
#pragma once

#include <filesystem>

#include "rung/rung_programs.h"

namespace rung {

// The directory of the running executable (/proc/self/exe; GetModuleFileNameW on Windows); empty when unknown.
// Builds, the worker and the software GPU are looked for beside it.
std::filesystem::path executable_dir();

// `configured` if set, else RUNG_PROBE_WORKER, else beside the running
// executable, else the installed libexec directory. Empty when none exists.
std::filesystem::path find_worker(const std::filesystem::path& configured = {});

}  // namespace rung
