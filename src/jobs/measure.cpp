#include "jobs/measure.h"

#include <chrono>

#include "core/sample_stats.h"
#include "jobs/target_session.h"
#include "runtime/clean_error.h"
#include "session/inputs.h"
#include "session/tensor_file.h"

namespace rung {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

ProbeJobResult run_probe_job(const ProbeJob& job) {
  ProbeJobResult r;
  auto fail = [&](const char* stage, const std::string& error) {
    r.ok = false;
    r.stage = stage;
    r.error = clean_error(error);
    return r;
  };
  auto process = install_runtime(job.target);
  if (!process) return fail("runtime", process.error().message);

  auto t0 = Clock::now();
  auto session = open_session(**process, job.target.model, session_settings(job.target));
  r.build_ms = ms_since(t0);
  if (!session) return fail("build", session.error().message);

  auto inputs = make_inputs(describe_session(*session), job.inputs, job.seed);
  if (!inputs) return fail("inputs", inputs.error().message);
  r.inputs_described = describe_inputs(*inputs, job.inputs);

  t0 = Clock::now();
  auto outputs = run_session(*session, *inputs);
  r.first_run_ms = ms_since(t0);
  if (!outputs) return fail("run", outputs.error().message);
  for (int i = 0; i < job.runs; ++i) {
    t0 = Clock::now();
    auto again = run_session(*session, *inputs);
    r.run_ms.push_back(ms_since(t0));
    if (!again) return fail("run", again.error().message);
  }
  r.median_ms = r.run_ms.empty() ? r.first_run_ms : median(r.run_ms);
  if (!job.outputs_dir.empty()) {
    if (auto s = write_output_directory(*outputs, job.outputs_dir); !s) return fail("run", s.error().message);
  }
  r.ok = true;
  return r;
}

nlohmann::json probe_job_entry(const nlohmann::json& job, LineChannel*) { return run_probe_job(job.get<ProbeJob>()); }

}  // namespace rung
