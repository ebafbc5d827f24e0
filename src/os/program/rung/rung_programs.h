// rung's programs beside one another: the `rung` front answers a warm probe
// itself and hands every other command to rung-full, which it becomes
// (cli/front.cpp); the engine finds its worker the same way.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

// One of rung's own programs ("rung-full", "rung-probe-worker"): beside the
// running executable, else in libexec as seen from an installed bin/ (an install
// moved to another prefix), else in the configured libexec directory. Empty when
// in none of them.
std::filesystem::path find_rung_program(const std::string& name);

// This process becomes `program`, run with `argv` (argv[0] first, null-ended) and
// this process's environment, keeping its id, its standard streams and its
// parent; descriptors opened close-on-exec are closed. Returns only on failure,
// with the reason.
Status become_program(const std::filesystem::path& program, char* const* argv);

}  // namespace rung
