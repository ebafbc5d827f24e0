// One side of a parity comparison, run in its own process (the
// rung-probe-worker executable's `parity JOB.json`): one ONNX Runtime build,
// one session, inputs taken one at a time over the socket (parity_protocol.h).
#pragma once

namespace rung {

// argv[1] is the job file. Returns the process exit code: 0 after the parent
// closed the socket, 2 on a malformed job, 1 when the side could not run.
int parity_worker_main(int argc, char** argv);

}  // namespace rung
