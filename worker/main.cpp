// rung-probe-worker: runs one unit of measurement in its own process, so that a
// provider that aborts, segfaults or hangs takes down this process and not the
// host. `rung-probe-worker JOB.json` runs a probe job; `bench JOB.json` a
// benchmark job; `compile JOB.json` builds an engine; `parity JOB.json` a parity side;
// `conform JOB.json` runs ONNX backend tests on one rung.
#include <cstring>

#include "jobs/benchmark.h"
#include "jobs/compile.h"
#include "jobs/conform_worker.h"
#include "jobs/measure.h"
#include "jobs/parity_side.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "bench") == 0) return rung::bench_worker_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "compile") == 0) return rung::compile_worker_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "parity") == 0) return rung::parity_worker_main(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "conform") == 0) return rung::conform_worker_main(argc - 1, argv + 1);
  return rung::probe_worker_main(argc, argv);
}
