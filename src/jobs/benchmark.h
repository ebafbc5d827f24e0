// One unit of `rung bench` work, run in its own child process
// (`rung-probe-worker bench JOB.json`): build a session for one model on one
// rung (cold, then from the engine cache where the rung compiles one), time the
// first inference, warm up, time the runs, record the peak resident memory, save
// the outputs, and profile one more run to see which provider ran which nodes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "os/json_form.h"
#include "os/line_channel.h"
#include "jobs/target.h"
#include "session/placement.h"
#include "rung/input_spec.h"

namespace rung {

struct BenchJob {
  JobTarget target;
  std::string model_name;
  InputSpec inputs;
  bool zero_inputs = false;        // generated inputs are zeros (values the spec fixes stay)
  bool fp16 = false;               // the provider compiles an fp16 engine from the f32 file
  int warmup = 3;                  // untimed runs after the first inference
  int runs = 30;                   // timed runs; ignored when duration_s > 0
  double duration_s = 0;           // > 0: time runs until this much time has been measured
  std::uint64_t seed = 0;
  std::filesystem::path outputs_dir;   // the last timed run's outputs, as .pb
  std::filesystem::path engine_dir;    // compiling rungs: the engine (EPContext model) lives here
  bool cold = true;                // build without the engine first; false: load the engine a previous round compiled
  bool profile = false;            // one more run, profiled, for placement evidence
  bool compare_bare = false;       // interleave a bare C API run with every timed run
  std::filesystem::path progress_file; // runs done so far, rewritten as the loop goes (the parent shows it)
};

struct BenchJobResult {
  bool ok = false;
  std::string stage;               // where it failed: "job", "runtime", "build", "inputs", "run"
  std::string error;
  std::string inputs_described;
  std::string provider_version;
  std::optional<double> build_cold_ms;    // session build that compiled (or, for the CPU, just built) the graph
  std::optional<double> build_cached_ms;  // session build from the engine cache
  std::string engine_note;         // how the engine cache went: "compiled ... in 812 ms", or why there is none
  double first_run_ms = 0;
  std::vector<double> run_ms;
  std::vector<double> bare_run_ms; // compare_bare: the same inputs through OrtApi::Run alone
  double peak_rss_kb = 0;          // getrusage ru_maxrss after the timed runs
  std::vector<std::string> evidence;
  NodePlacement placement;             // from the profile of one more run: which provider ran how many nodes
};

RUNG_JSON_FORM(BenchJob, target, model_name, inputs, zero_inputs, fp16, warmup, runs, duration_s, seed, outputs_dir,
                                   engine_dir, cold, profile, compare_bare, progress_file)
RUNG_JSON_FORM(BenchJobResult, ok, stage, error, inputs_described, provider_version, build_cold_ms, build_cached_ms,
                                   engine_note, first_run_ms, run_ms, bare_run_ms, peak_rss_kb, evidence, placement)

// Does the work in this process. Never throws.
BenchJobResult run_bench_job(const BenchJob& job);

// The worker's entry for "bench" jobs.
nlohmann::json bench_job_entry(const nlohmann::json& job, LineChannel* channel);

}  // namespace rung
