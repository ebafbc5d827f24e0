// Where the rung-probe-worker executable is: the isolation of every measurement
// (probe, bench, parity) runs through it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/rung_programs.h"

namespace rung {

// The directory of the running executable (/proc/self/exe; GetModuleFileNameW on Windows); empty when unknown.
// Builds, the worker and the software GPU are looked for beside it.
std::filesystem::path executable_dir();

// The directory of the file rung's own code was loaded from: librung_engine's
// for an application that embeds the engine, the program's for rung's own
// programs (dladdr; GetModuleHandleExW on Windows); empty when unknown. An
// engine finds its worker relative to it, never to its application's executable.
std::filesystem::path module_dir();

// Where an embedded engine looks for its worker, in order: `configured`,
// RUNG_PROBE_WORKER (when `read_environment`), beside module_dir(), then in
// the kit's libexec/rung reached from module_dir() (an installed kit, wherever it
// was moved: from its lib/ or its bin/). No install prefix is compiled in. Each
// place is put in `looked` (for the error that names them); empty when none
// holds a regular file.
std::filesystem::path find_engine_worker(const std::filesystem::path& configured, bool read_environment,
                                         std::vector<std::string>* looked);

// `configured` if set, else RUNG_PROBE_WORKER (when `read_environment`), else
// beside the running executable, else in the kit's libexec/rung reached from
// it. Empty when none exists.
std::filesystem::path find_worker(const std::filesystem::path& configured, bool read_environment);

}  // namespace rung
