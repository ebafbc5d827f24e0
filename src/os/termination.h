// A process ended by SIGTERM, SIGINT or SIGHUP leaves nothing behind: the
// children it started are killed and the work directories it made removed,
// then it ends by the same signal. A program opts in once, first thing in main
// (the CLI does; an application embedding the engine keeps its own signal
// handling): the signals are blocked in every thread, and one thread waits for
// them. Children are started with them unblocked and at their defaults.
//
// A process killed outright (SIGKILL) cannot clean up; its children end with it
// all the same (jobs/worker.h: PR_SET_PDEATHSIG).
#pragma once

#include <filesystem>

#include "rung/termination.h"

namespace rung {

// What the cleanup acts on. ChildProcess (os/posix/children.h) and WorkDir register themselves.
void track_work_dir(const std::filesystem::path& dir);
// create_directories, unless the cleanup has begun: then the calling thread
// waits for the end instead, since a directory made inside a work directory the
// cleanup already removed would bring it back and be left behind.
void create_directories_unless_ending(const std::filesystem::path& dir, std::error_code& ec);
void untrack_work_dir(const std::filesystem::path& dir);

}  // namespace rung
