// Ending cleanly on SIGTERM, SIGINT or SIGHUP: the worker processes rung
// started are killed and its work directories removed, then the process ends
// by the same signal. A program opts in once, first thing in main, before it
// starts threads (the rung CLI does; an application embedding the engine keeps
// its own signal handling). Workers end with their parent in any case, kill -9
// included (jobs/worker.h).
#pragma once

namespace rung {

void end_cleanly_on_termination_signals();

}  // namespace rung
