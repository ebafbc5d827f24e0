// rung-probe-worker: runs one job in its own process, so that a provider that
// aborts, segfaults or hangs takes down this process and not the host.
// `rung-probe-worker KIND JOB.json [--channel=FD]`; the parent is jobs/runner.h.
#include "kinds.h"

#include "jobs/benchmark.h"
#include "jobs/compile.h"
#include "jobs/conform_worker.h"
#include "jobs/measure.h"
#include "jobs/parity_side.h"
#include "jobs/worker.h"
#include "rung/runtime.h"

namespace rung {
namespace {

// Every job kind the worker runs: the one table.
constexpr JobKind kKinds[] = {
    {"probe", probe_job_entry},      // the probe's measurement of one rung on one model
    {"bench", bench_job_entry},      // bench's measurement of one rung on one model, one round
    {"compile", compile_job_entry},  // one model's engine for the engine's cache
    {"parity", parity_job_entry},    // one side of a parity comparison, fed over its channel
    {"conform", conform_job_entry},  // ONNX backend tests on one rung, fed over its channel
};

}  // namespace

int run_probe_worker(int argc, char** argv) {
  keep_onnxruntime_telemetry_off_in_this_process();
  return worker_main(argc, argv, kKinds);
}

}  // namespace rung
