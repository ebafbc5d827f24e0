// rung-probe-worker: runs one probe job in its own process, so that a provider
// that aborts, segfaults or hangs takes down this process and not the host.
#include "probe_job.h"

int main(int argc, char** argv) { return rung::probe_worker_main(argc, argv); }
