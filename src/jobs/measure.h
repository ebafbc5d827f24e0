// One unit of probe work: build a session for one model on one rung, run it
// once, time N more runs, save the outputs. Run in a child process (the
// rung-probe-worker executable) or, in in-process mode, right here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jobs/channel.h"
#include "jobs/target.h"
#include "rung/input_spec.h"

namespace rung {

struct ProbeJob {
  JobTarget target;
  std::string model_name;
  InputSpec inputs;
  int runs = 3;
  std::uint64_t seed = 0;
  std::filesystem::path outputs_dir;   // outputs are written here as .pb
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
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProbeJob, target, model_name, inputs, runs, seed, outputs_dir)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProbeJobResult, ok, stage, error, inputs_described, build_ms, first_run_ms, run_ms, median_ms)

// Does the work in this process. Never throws.
ProbeJobResult run_probe_job(const ProbeJob& job);

// The worker's entry for "probe" jobs.
nlohmann::json probe_job_entry(const nlohmann::json& job, LineChannel* channel);

}  // namespace rung
