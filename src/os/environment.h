// The one way rung reads environment variables. rung's own (RUNG_*) are read
// only where the caller's options allow it: the CLI and its worker read them,
// an embedded engine reads none unless its application opts in (the C ABI's
// `environment` option), so a variable set around an application never changes
// what the engine it embeds does. The system's (HOME, TMPDIR, LD_LIBRARY_PATH,
// XDG_*, PGCONNECT_TIMEOUT, ...) are read as the system defines them.
//
// Nothing else reads the environment: os/environment_guard.h, force-included
// into every source rung builds, makes getenv a compile error elsewhere.
#pragma once

#include <optional>
#include <string>

namespace rung {

// A RUNG_* variable's value when `allowed` (the caller's options read rung's
// variables: the CLI's do, an embedded engine's only when opted in) and it is
// set and not empty (set at all, when `empty_counts`: a setting that must name
// something, such as RUNG_ORT_DIR, is an error when empty).
std::optional<std::string> rung_variable(const char* name, bool allowed, bool empty_counts = false);

// A system variable's value when set and not empty. A RUNG_* name is never read
// here (always nullopt): rung's own go through rung_variable.
std::optional<std::string> system_variable(const char* name);

// A variable by its name alone (a manifest's ${NAME}): rung's own when
// `rung_allowed`, the system's always.
std::optional<std::string> any_variable(const char* name, bool rung_allowed);

}  // namespace rung
