// One unit of probe work: build a session for one model on one rung, run it
// once, time N more runs, save the outputs. For a rung above the floor, a CPU
// session of the same model is built beside it and the two are timed in
// alternate runs (each pair meets the same load), more pairs while the speed
// rule cannot decide, within a time budget; then one profiled run says which
// provider ran how many nodes. Run in a child process (the rung-probe-worker
// executable) or, in in-process mode, right here.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "os/json_form.h"
#include "os/line_channel.h"
#include "core/speed_rule.h"
#include "jobs/target.h"
#include "session/placement.h"
#include "rung/input_spec.h"

namespace rung {

struct ProbeJob {
  JobTarget target;
  std::string model_name;
  InputSpec inputs;
  int runs = 3;
  std::uint64_t seed = 0;
  std::filesystem::path outputs_dir;   // outputs are written here as .pb
  // Above the floor: time against a CPU session in alternate runs, judged by `rule`.
  bool paired = false;
  RungSpec floor_rung;
  SpeedRule rule;
  double budget_s = 2;                 // timing time after the first `runs` pairs
  int max_pairs = 400;
  bool profile = false;                // one more run, profiled: where the nodes ran
};

struct ProbeJobResult {
  bool ok = false;
  std::string stage;                   // where it failed: "runtime", "build", "inputs", "run"
  std::string error;
  std::string inputs_described;        // for a clear error when the floor cannot run the model
  double build_ms = 0;
  double first_run_ms = 0;
  std::vector<double> run_ms;
  double median_ms = 0;
  std::vector<double> floor_run_ms;    // paired: the CPU session's runs, one beside each of run_ms
  double floor_median_ms = 0;
  NodePlacement placement;                 // profile: which provider ran how many nodes
  std::string placement_error;         // why there is no placement
};

RUNG_JSON_FORM(SpeedRule, acceptance_ratio, min_gain, confidence, min_pairs)
RUNG_JSON_FORM(ProbeJob, target, model_name, inputs, runs, seed, outputs_dir, paired, floor_rung, rule, budget_s,
                                   max_pairs, profile)
RUNG_JSON_FORM(ProbeJobResult, ok, stage, error, inputs_described, build_ms, first_run_ms, run_ms, median_ms,
                                   floor_run_ms, floor_median_ms, placement, placement_error)

// Does the work in this process. Never throws.
ProbeJobResult run_probe_job(const ProbeJob& job);

// The worker's entry for "probe" jobs.
nlohmann::json probe_job_entry(const nlohmann::json& job, LineChannel* channel);

// Milliseconds since `t` on the steady clock.
double ms_since(std::chrono::steady_clock::time_point t);

}  // namespace rung
