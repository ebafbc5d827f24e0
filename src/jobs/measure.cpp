#include "jobs/measure.h"

#include <algorithm>
#include <chrono>

#include "core/sample_stats.h"
#include "jobs/target_session.h"
#include "runtime/clean_error.h"
#include "session/inputs.h"
#include "session/tensor_file.h"

namespace rung {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

namespace {

using Clock = std::chrono::steady_clock;

// One timed run; its time is appended to `times`.
Status timed_run(Ort::Session& session, const std::vector<Tensor>& inputs, std::vector<double>& times) {
  const auto t0 = Clock::now();
  auto ran = run_session(session, inputs);
  times.push_back(ms_since(t0));
  if (!ran) return ran.error();
  return {};
}

// The rung and the CPU in alternate runs, the order swapped every pair so neither
// always meets the warmer cache; more pairs (doubling) while the rule cannot
// decide and the budget lasts.
Status paired_runs(const ProbeJob& job, Ort::Session& rung, Ort::Session& floor, const std::vector<Tensor>& inputs,
                   ProbeJobResult& r) {
  const auto start = Clock::now();
  int batch = std::max(job.runs, job.rule.min_pairs);
  std::vector<double> ratios;
  for (;;) {
    for (int i = 0; i < batch; ++i) {
      const bool floor_first = (r.run_ms.size() % 2) == 1;
      if (floor_first) {
        RUNG_RETURN_IF_ERROR(timed_run(floor, inputs, r.floor_run_ms));
      }
      RUNG_RETURN_IF_ERROR(timed_run(rung, inputs, r.run_ms));
      if (!floor_first) {
        RUNG_RETURN_IF_ERROR(timed_run(floor, inputs, r.floor_run_ms));
      }
      ratios.push_back(r.floor_run_ms.back() > 0 ? r.run_ms.back() / r.floor_run_ms.back() : 1.0);
    }
    const bool decided = judge_speed(ratios, job.rule).call != SpeedCall::kNeedMore;
    const double spent_s = ms_since(start) / 1000;
    const int pairs = static_cast<int>(ratios.size());
    if (decided || spent_s >= job.budget_s || pairs >= job.max_pairs) return {};
    batch = std::min(pairs, job.max_pairs - pairs);
  }
}

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
  if (job.paired) {
    JobTarget cpu = job.target;
    cpu.rung = job.floor_rung;
    cpu.provider_options.clear();
    auto floor = open_session(**process, job.target.model, session_settings(cpu));
    if (!floor) return fail("build", "the CPU session timed beside it: " + floor.error().message);
    if (auto first = run_session(*floor, *inputs); !first) return fail("run", "the CPU session timed beside it: " + first.error().message);
    if (auto s = paired_runs(job, *session, *floor, *inputs, r); !s) return fail("run", s.error().message);
    r.floor_median_ms = median(r.floor_run_ms);
  } else {
    for (int i = 0; i < job.runs; ++i) {
      if (auto s = timed_run(*session, *inputs, r.run_ms); !s) return fail("run", s.error().message);
    }
  }
  r.median_ms = r.run_ms.empty() ? r.first_run_ms : median(r.run_ms);
  if (!job.outputs_dir.empty()) {
    if (auto s = write_output_directory(*outputs, job.outputs_dir); !s) return fail("run", s.error().message);
  }
  if (job.profile) {
    // The timed session, profiled over one more run: the model is not built again where the runtime can.
    auto prepared = prepare_session(std::move(*session));
    auto placement = prepared ? profile_placement(**process, *prepared, job.target.model, session_settings(job.target), *inputs,
                                                  job.outputs_dir.parent_path() / "profile")
                              : Result<NodePlacement>(prepared.error());
    if (placement) {
      r.placement = *placement;
    } else {
      r.placement_error = placement.error().message;
    }
  }
  r.ok = true;
  return r;
}

nlohmann::json probe_job_entry(const nlohmann::json& job, LineChannel*) { return run_probe_job(job.get<ProbeJob>()); }

}  // namespace rung
