// The POSIX side of termination cleanup, for ChildProcess: which signals it
// answers (a child starts with them unblocked) and the children it kills.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace rung {

// The signals that cleanup answers: SIGTERM, SIGINT, SIGHUP.
sigset_t termination_signals();

void track_child(pid_t pid);
// A child leads a process group of its own (ChildProcess::spawn): SIGKILL to the
// group, so what it started ends with it, then to the child itself.
void kill_child_group(pid_t pid);
// waitpid for a tracked child; one reaped is no longer tracked, in the same
// step, so the cleanup never signals a process id that was handed on.
pid_t reap_child(pid_t pid, int* status, int options);

}  // namespace rung
