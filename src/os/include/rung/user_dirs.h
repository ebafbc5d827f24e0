// The directories rung keeps its own files in when the caller names none: the
// cache (the probe's decision, the engines) and the data (the release
// registry). Each is the XDG directory when its variable holds an absolute
// path, else under $HOME when HOME is an absolute directory this user can
// write to; else a private directory, rung-<uid> under $TMPDIR (or /tmp),
// made 0700 and checked every time (a directory, not a link; owned by this
// user; writable by no one else), so that another local user cannot plant a
// cache or a registry there. When that check fails, the answer is an error
// naming what to set, never a shared directory.
// On Windows both are under the user's local application data:
// %LOCALAPPDATA%\rung\cache and %LOCALAPPDATA%\rung\data (LOCALAPPDATA when it
// holds an absolute path, else the known folder the system names).
#pragma once

#include <filesystem>

#include "rung/result.h"

namespace rung {

// $XDG_CACHE_HOME/rung, else $HOME/.cache/rung, else <tmp>/rung-<uid>/cache.
// kInvalidArgument: "HOME is not set, and /tmp/rung-1000 is owned by uid 1001,
// not by you: set XDG_CACHE_HOME or HOME".
Result<std::filesystem::path> user_cache_dir();

// $XDG_DATA_HOME/rung, else $HOME/.local/share/rung, else <tmp>/rung-<uid>/data.
Result<std::filesystem::path> user_data_dir();

}  // namespace rung
