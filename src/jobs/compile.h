// Building one model's engine: a compiling rung's EPContext model through ONNX
// Runtime's compile API, or the CPU rung's optimised graph in ORT format. Run in
// a child process (rung-probe-worker compile JOB.json), so a provider that
// aborts in its compiler takes down the child and not the application.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "rung/ladder.h"

namespace rung {

struct CompileJob {
  std::filesystem::path runtime_library;
  bool allow_writable_runtime = false;
  std::filesystem::path model;
  std::filesystem::path output;         // a temporary name; the caller renames it into place
  RungSpec rung;
  bool fp16 = false;
  std::filesystem::path provider_cache_dir;  // for providers that keep their own caches beside ours
  std::size_t tensorrt_workspace_bytes = std::size_t{512} << 20;
};

struct CompileResult {
  bool ok = false;
  std::string error;
  double ms = 0;
};

CompileResult run_compile_job(const CompileJob& job);

std::string compile_job_to_json(const CompileJob& job);
// The worker's entry: reads JOB.json, writes result.json beside it.
int compile_worker_main(int argc, char** argv);

}  // namespace rung
