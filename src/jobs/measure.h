// One unit of probe work: build a session for one model on one rung, run it
// once, time N more runs, save the outputs. Run in a child process (the
// rung-probe-worker executable) or, in in-process mode, right here.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/input_spec.h"
#include "rung/ladder.h"
#include "rung/result.h"

namespace rung {

struct ProbeJob {
  std::filesystem::path runtime_library;
  bool allow_writable_runtime = false;
  std::string model_name;
  std::filesystem::path model;
  InputSpec inputs;
  RungSpec rung;
  int runs = 3;
  int threads = 0;
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

std::string job_to_json(const ProbeJob& job);
Result<ProbeJob> job_from_json(const std::string& text);
std::string result_to_json(const ProbeJobResult& result);
Result<ProbeJobResult> result_from_json(const std::string& text);

std::string rung_to_json(const RungSpec& rung);
Result<RungSpec> rung_from_json(const std::string& text);

// Does the work in this process. Never throws.
ProbeJobResult run_probe_job(const ProbeJob& job);

// The entry point of the worker executable: reads the job file, writes the
// result beside it as result.json. Returns the process exit code.
int probe_worker_main(int argc, char** argv);

}  // namespace rung
