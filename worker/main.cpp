// rung-probe-worker: runs one job in its own process, so that a provider that
// aborts, segfaults or hangs takes down this process and not the host.
// `rung-probe-worker KIND JOB.json [--channel=FD]`; the parent is jobs/runner.h.
#include "jobs/benchmark.h"
#include "jobs/compile.h"
#include "jobs/conform_worker.h"
#include "jobs/measure.h"
#include "jobs/parity_side.h"
#include "jobs/worker.h"
#include "rung/runtime.h"

namespace {

// Every job kind the worker runs: the one table.
constexpr rung::JobKind kKinds[] = {
    {"probe", rung::probe_job_entry},      // the probe's measurement of one rung on one model
    {"bench", rung::bench_job_entry},      // bench's measurement of one rung on one model, one round
    {"compile", rung::compile_job_entry},  // one model's engine for the engine's cache
    {"parity", rung::parity_job_entry},    // one side of a parity comparison, fed over its channel
    {"conform", rung::conform_job_entry},  // ONNX backend tests on one rung, fed over its channel
};

}  // namespace

int main(int argc, char** argv) {
  rung::keep_onnxruntime_telemetry_off_in_this_process();
  return rung::worker_main(argc, argv, kKinds);
}
