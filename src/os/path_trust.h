// Whether another local user could change what a path names: a library rung
// loads, a directory it keeps its cache in. The path is walked from / one
// component at a time, symbolic links followed as the kernel would, and every
// component passed through (the file, each directory above it, each link and
// the directories its target lies in) must be owned by root or by this user and
// writable by no one else. A sticky directory such as /tmp may be writable by
// all: others cannot rename or remove there what they do not own, and what lies
// below it is checked in turn.
#pragma once

#include <filesystem>

#include "rung/result.h"

namespace rung {

// Ok, or kPermission naming the component and why, for the caller to put after
// what it refuses: "/tmp/p is writable by other users (mode 777)", "/srv/x is
// owned by user bob (uid 1001), not by you or root". kNotFound when a component
// is missing; kInvalidArgument for a relative path.
Status check_path_trusted(const std::filesystem::path& path);

}  // namespace rung
