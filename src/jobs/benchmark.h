// One unit of `rung bench` work, run in its own child process
// (`rung-probe-worker bench JOB.json`): build a session for one model on one
// rung (cold, then from the engine cache where the rung compiles one), time the
// first inference, warm up, time the runs, record the peak resident memory, save
// the outputs, and profile one more run to see which provider ran which nodes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/input_spec.h"
#include "rung/ladder.h"
#include "rung/result.h"

namespace rung {

struct BenchJob {
  std::filesystem::path runtime_library;
  bool allow_writable_runtime = false;
  std::string model_name;
  std::filesystem::path model;
  InputSpec inputs;
  bool zero_inputs = false;        // generated inputs are zeros (values the spec fixes stay)
  RungSpec rung;
  bool fp16 = false;               // the provider compiles an fp16 engine from the f32 file
  int threads = 0;                 // intra-op threads; 0: ONNX Runtime's default
  int warmup = 3;                  // untimed runs after the first inference
  int runs = 30;                   // timed runs; ignored when duration_s > 0
  double duration_s = 0;           // > 0: time runs until this much time has been measured
  std::uint64_t seed = 0;
  std::filesystem::path outputs_dir;   // the last timed run's outputs, as .pb
  std::filesystem::path engine_dir;    // compiling rungs: the engine (EPContext model) lives here
  bool cold = true;                // build without the engine first; false: load the engine a previous round compiled
  bool profile = false;            // one more session, profiled, for placement evidence
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
  std::vector<std::pair<std::string, int>> nodes_by_provider;  // from the profile: provider -> nodes it ran
};

std::string bench_job_to_json(const BenchJob& job);
Result<BenchJob> bench_job_from_json(const std::string& text);
std::string bench_result_to_json(const BenchJobResult& result);
Result<BenchJobResult> bench_result_from_json(const std::string& text);

// Does the work in this process. Never throws.
BenchJobResult run_bench_job(const BenchJob& job);

// `rung-probe-worker bench JOB.json`: writes result.json beside the job.
int bench_worker_main(int argc, char** argv);

}  // namespace rung
