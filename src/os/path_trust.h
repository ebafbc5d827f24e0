// Whether another local user could change what a path names: a library rung
// loads, a directory it keeps its cache in. The path is walked from its root one
// component at a time, links followed as the system would, and every component
// passed through (the file, each directory above it, each link and the
// directories its target lies in) must be owned by this user or the system and
// changeable by no one else. A directory where others may only add names (Linux's
// sticky /tmp, Windows' C:\) is passed through: what lies below is checked in turn.
// Linux judges owner and mode (os/posix/path_trust.cpp); Windows the owner and
// the access list (os/windows/path_trust.cpp).
#pragma once

#include <filesystem>

#include "rung/result.h"

namespace rung {

// Ok, or kPermission naming the component and why, for the caller to put after
// what it refuses: "/tmp/p is writable by other users (mode 777)", "/srv/x is
// owned by user bob (uid 1001), not by you or root", "C:\m is writable by other
// users (Everyone (S-1-1-0) may write)". kNotFound when a component
// is missing; kInvalidArgument for a relative path.
Status check_path_trusted(const std::filesystem::path& path);

}  // namespace rung
