// Engines built in the background: one model at a time, smallest first, each in
// a child process, written under a temporary name and renamed into place so no
// session ever loads half a file. The cache is one directory per fingerprint
// (runtime, device, rung) and precision: f32 and fp16 never share a directory.
//
// A build that fails is one of two things. A verdict: the provider said no (its
// own words, in the worker's result); recorded beside the slot and not tried
// again for this model file. A death: the worker was killed (a signal, the out-
// of-memory killer, its deadline) or ended without its answer, or, building in
// process, the launch itself died; that says nothing about the model, so it is
// a strike in the probe's ledger (probe/attempts.h, `strikes.json` in the
// fingerprint's directory) with when and in which launch, tried again at the
// next start, and refused (then recorded like a verdict) only after deaths in
// kStrikesToRefuse launches in a row. A launch tries each engine once: a death
// is not retried until the next start, since the same memory pressure would
// mostly kill the retry too, and each try can take up to the deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "rung/engine_core.h"
#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/model.h"
#include "rung/runtime.h"

namespace rung {

struct EngineBuildPlan {
  RuntimeBuild build;
  bool allow_writable_runtime = false;
  Hardware hardware;
  RungSpec rung;                        // a compiling rung, or the CPU (its optimised-graph form)
  std::vector<ModelRegistration> models;
  std::filesystem::path cache_dir;      // engines live under <cache_dir>/engines/
  std::filesystem::path worker;         // empty: build in this process
  std::chrono::milliseconds deadline{30 * 60'000};
  // When it turns true (the engine is being freed), a compile in its worker is killed:
  // no verdict, no strike (a stop is no evidence about the model).
  const std::atomic<bool>* cancel = nullptr;
  std::uint64_t memory_limit_mb = kWorkerMemoryDefault;  // a compile's worker holds at most this much data (0: no limit)
  std::size_t tensorrt_workspace_bytes = std::size_t{512} << 20;
  std::uint64_t input_seed = 0;         // the probe's: a compile-ready rewrite is proved on these inputs
  std::string launch;                   // this start (new_launch_id()); empty: build_engines makes one per call
};

// A name for one start of the engine, unique across processes: a worker's death counts once per launch.
std::string new_launch_id();

// The words of a build whose worker died (`what`: "the worker was killed by
// SIGKILL"): once, and after deaths in `launches` launches in a row.
std::string died_once_words(const std::string& what);
std::string died_refused_words(const std::string& what, int launches);

struct EngineLanding {
  std::string model;
  std::filesystem::path file;  // set when it landed
  std::string failure;         // set when it failed
  std::string rewrite = {};    // set when the engine was built from a rewritten graph: what changed
  std::string replaced = {};   // set when a cached engine was not this model's (identity.json): why it was rebuilt
};

// Where a model's engine lives (whether or not it exists yet), and whether a
// failure is recorded for this exact model file.
struct EngineSlot {
  std::filesystem::path file;
  std::filesystem::path failure_record;
  std::filesystem::path rewritten;  // the compile-ready rewrite of a model with control flow, when it needed one
  // What the engine was built from, written when it lands and checked before a cached one is used: the
  // source file's SHA-256, the engine's own, and the fingerprint of build, device and rung. An engine that
  // does not match (another model's engine copied into the slot, one edited since) is rebuilt, never run.
  std::filesystem::path identity;
};

// The file a model's engine is compiled from: on a rung that loads quantised
// forms, the quantised form its model id names (never the f32 file under a
// quantised label); otherwise the f32 file.
std::filesystem::path engine_source(const RungSpec& rung, const ModelRegistration& model);

EngineSlot engine_slot(const EngineBuildPlan& plan, const ModelRegistration& model, const std::string& model_sha256);

// Builds every engine of the plan that is missing. `on_landing` is called after
// each model (landed or failed); `stop` ends the walk between models.
// Returns the landings in the order they happened (cache hits first).
std::vector<EngineLanding> build_engines(const EngineBuildPlan& plan,
                                         const std::function<void(const EngineLanding&, std::size_t index)>& on_landing,
                                         const std::function<void(const std::string& model)>& on_start,
                                         const std::atomic<bool>& stop);

}  // namespace rung
