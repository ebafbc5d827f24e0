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

#include <signal.h>
#include <sys/types.h>

#include <filesystem>

#include "rung/termination.h"

namespace rung {

// The signals that cleanup answers: SIGTERM, SIGINT, SIGHUP.
sigset_t termination_signals();

// What the cleanup acts on. ChildProcess and WorkDir register themselves.
void track_child(pid_t pid);
// waitpid for a tracked child; one reaped is no longer tracked, in the same
// step, so the cleanup never signals a process id that was handed on.
pid_t reap_child(pid_t pid, int* status, int options);
void track_work_dir(const std::filesystem::path& dir);
void untrack_work_dir(const std::filesystem::path& dir);

}  // namespace rung
