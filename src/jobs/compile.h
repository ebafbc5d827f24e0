// Building one model's engine: a compiling rung's EPContext model through ONNX
// Runtime's compile API, or the CPU rung's optimised graph in ORT format. Run in
// a child process (rung-probe-worker compile JOB.json), so a provider that
// aborts in its compiler takes down the child and not the application.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "os/json_form.h"
#include "os/line_channel.h"
#include "jobs/target.h"
#include "rung/input_spec.h"

namespace rung {

struct CompileJob {
  JobTarget target;
  std::filesystem::path output;         // a temporary name; the caller renames it into place
  bool fp16 = false;
  std::filesystem::path provider_cache_dir;  // for providers that keep their own caches beside ours
  std::size_t tensorrt_workspace_bytes = std::size_t{512} << 20;
  // A model with control flow goes through the compile-ready rewrite first
  // (graph/compile_ready.h), kept at `rewritten` with its note beside it, and
  // is compiled from there only once CPU sessions of both compute exactly the
  // same outputs on these inputs. An empty `rewritten` compiles the model as it is.
  std::filesystem::path rewritten;
  InputSpec inputs;
  std::uint64_t seed = 0;
};

struct CompileResult {
  bool ok = false;
  std::string error;
  double ms = 0;
};

RUNG_JSON_FORM(CompileJob, target, output, fp16, provider_cache_dir, tensorrt_workspace_bytes, rewritten, inputs,
                                   seed)
RUNG_JSON_FORM(CompileResult, ok, error, ms)

// What the rewrite kept at `rewritten` changed, when the engine was compiled from it ("" otherwise).
std::string read_rewrite_note(const std::filesystem::path& rewritten);

CompileResult run_compile_job(const CompileJob& job);

// The worker's entry for "compile" jobs.
nlohmann::json compile_job_entry(const nlohmann::json& job, LineChannel* channel);

}  // namespace rung
