// The probe: a rung is chosen by building a real session on it, timing it
// against the CPU floor and checking that its outputs match the floor's. The
// choice is cached under a fingerprint; a provider that crashes or hangs takes
// down a child process, never the host.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rung/limits.h"
#include "rung/model.h"
#include "rung/result.h"
#include "rung/runtime.h"
#include "rung/tolerance.h"

namespace rung {

enum class Verdict { kTaken, kSlower, kSlowerWithinNoise, kNotPlaced, kUnfaithful, kFailed, kCrashed, kTimedOut, kRefused, kNotTried };
// "taken", "slower", "slower (within noise)", "not placed", "unfaithful", "failed", "crashed", "timed out", "refused", "not tried"
const char* verdict_name(Verdict v);

// One model on one rung.
struct Measurement {
  std::string model;
  Verdict verdict = Verdict::kNotTried;
  std::string reason;               // "libonnxruntime_providers_cuda.so not found", "SIGABRT", ...
  double build_ms = 0;              // session construction
  double first_run_ms = 0;
  double median_ms = 0;             // of the timed runs
  double floor_median_ms = 0;
  double max_abs_diff = 0;          // against the floor's outputs
  double max_rel_diff = 0;
  // Above the floor, timed against the CPU in alternate runs: the median of the
  // pairs' ratios and its interval (the speed rule's), and how many pairs it took.
  double ratio_median = 0;
  double ratio_low = 0;
  double ratio_high = 0;
  int pairs = 0;
  // Where the nodes ran, from ONNX Runtime's profile of one run: nodes run by a
  // provider other than the CPU's, every node run, their share of kernel time.
  bool placement_known = false;
  int placed_nodes = 0;
  int total_nodes = 0;
  double placed_time_share = 0;
  std::string placement;            // "RungSimAccelerator ran 212 of 418 nodes, 61% of run time"
  double ratio() const { return ratio_median > 0 ? ratio_median : floor_median_ms > 0 ? median_ms / floor_median_ms : 0; }
  double placed_share() const { return total_nodes > 0 ? static_cast<double>(placed_nodes) / total_nodes : 0; }
};

struct RungOutcome {
  std::string rung;                 // "webgpu", "cpu", or a plugin's EP name
  std::string display;              // "WebGPU"
  Verdict verdict = Verdict::kNotTried;
  std::string reason;
  std::vector<Measurement> models;
};

// What a probe is asked that an engine is asked too, declared once: an engine
// probes when it starts, and `rung probe` decides what the engine would. Both
// option structs are made of it (ProbeOptions here, EngineOptions in
// rung/engine_core.h), so the engine hands it on whole, never field by field.
// Each field's C ABI key, range and unit are in rung/option_table.h.
struct ProbeSettings {
  std::filesystem::path cache_dir;              // required: the decision and its evidence live here
  RuntimeSearchOptions runtimes;
  std::filesystem::path hardware_root = "/";
  int probe_runs = 3;                           // the floor's timed runs after one untimed run; a rung's first pairs (at least 8)
  // Taken when the interval of the rung's time / the floor's (paired runs, sign
  // test at ProbeOptions::confidence) lies under acceptance_ratio * (1 - min_gain).
  double acceptance_ratio = 1.0;
  // Per rung and model, isolated mode: a first run may compile shaders for tens of seconds.
  std::chrono::milliseconds probe_deadline{180'000};
  bool isolate = true;                          // child processes; false = in process, with the attempt file
  std::filesystem::path worker;                 // default: RUNG_PROBE_WORKER, beside the executable, libexec
  std::optional<std::string> forced_rung;       // else RUNG_FORCE_RUNG
  std::vector<std::filesystem::path> plugin_dirs;  // plus RUNG_PLUGIN_DIR: each plugin EP .so becomes a rung
  // The most data a worker may hold, in MiB: by default half the machine's memory
  // (rung/limits.h's kWorkerMemoryDefault); 0: no limit. A provider that allocates
  // without end ends its worker, which says so, and the rung is refused as crashed.
  std::uint64_t worker_memory_limit_mb = kWorkerMemoryDefault;
};

struct ProbeOptions : ProbeSettings {
  std::vector<RegisteredModel> models;          // every registered model (all are fingerprinted)
  std::vector<std::string> probe_models;        // names to probe with; empty = the smallest registered
  double min_gain = 0.05;
  double confidence = 0.99;
  double time_budget_s = 2;                     // per rung and model: more pairs while undecided, until this is spent
  int max_pairs = 400;
  // A rung is placed when its provider ran at least this share of the nodes ONNX
  // Runtime's profile names; below it the rung is `not placed`, never taken.
  double min_placed_share = 0.10;
  Tolerance tolerance = Tolerance::close();
  bool reprobe = false;                         // ignore a valid cache
  // false for a launch that only answers and runs nothing (`rung probe`): while the
  // cache's record vouches for the build it names and every library that build
  // needs still resolves, not even that build is opened (probe/launch.h); its
  // RuntimeBuild is then as recorded, with a null api. An engine opens it.
  bool open_vouched_build = true;
  // Intra-op threads for every session; 0 = ONNX Runtime's default;
  // kInferenceThreads = the engine's inference pool on this hardware
  // (default_inference_threads, at most the CPUs rung may use), so that `rung
  // probe` decides under the threads an engine runs with and shares its cache.
  static constexpr int kInferenceThreads = -1;
  int threads = 0;
  std::uint64_t seed = 20260919;
  // When set and it turns true (an engine being freed), a worker running is killed
  // and the probe returns an error at once, caching nothing.
  const std::atomic<bool>* stop = nullptr;
  // Progress as the probe goes ("CPU floor · ppocr_det_v4", "WebGPU · ppocr_det_v4").
  std::function<void(const std::string&)> on_progress;
  // Each log line as soon as it is known (a launch may die right after it).
  std::function<void(const std::string&)> on_log;
};

struct ProbeOutcome {
  std::string chosen;                 // rung name
  std::string chosen_display;
  std::string forced_by;              // "", "RUNG_FORCE_RUNG", "configuration"
  // When the chosen rung compiles engines: the first non-compiling rung below it
  // that was also taken (CUDA under TensorRT) serves until engines land; else "cpu".
  std::string fallback = "cpu";
  bool from_cache = false;
  std::string runtime_version;
  std::filesystem::path runtime_library;
  std::size_t builds_found = 0;
  RungOutcome floor;
  std::vector<RungOutcome> rungs;     // the ladder above the floor, best first
  std::vector<std::string> model_errors;  // probe models the floor itself could not run
  bool inputs_refused = false;            // one of them because its inputs were refused (a bad spec, a tensor above the limit)
  bool model_unloadable = false;          // one of them because the CPU floor cannot load the file: an input error too
  std::vector<std::string> log;       // what the probe noticed (a stale cache, a cache it could not write)
  // The probe's inputs are random: its outputs check that the tensors match, they
  // are no evidence about the decisions a model makes (boxes, text, classes).
  static constexpr const char* kInputsNote =
      "the probe's inputs are seeded random tensors: evidence of speed and of matching tensors, not of the decisions a model makes "
      "(a detector finds nothing on them); gate decisions with rung parity on real inputs";
  std::filesystem::path cache_file;

  // "CPU · ONNX Runtime 1.30.0 · WebGPU failed: no adapter · TensorRT failed: ..."
  std::string about_line() const;
  std::string to_json() const;
};

// Runs (or reads from the cache) the whole probe and returns the decision. Blocks.
Result<ProbeOutcome> run_probe(const ProbeOptions& options);

// The decision a valid probe cache holds, as run_probe would return it, without
// measuring anything; nullopt when the probe would have to measure (no cache, a
// changed model, build or device, or options.reprobe). Links none of the walk:
// a program that only answers warm launches stays small (the `rung` front).
Result<std::optional<ProbeOutcome>> probe_from_cache(const ProbeOptions& options);

// The probe on its own low-priority thread: start() returns at once, and until
// the probe reports every request is the floor's.
class BackgroundProbe {
 public:
  static std::unique_ptr<BackgroundProbe> start(ProbeOptions options);
  ~BackgroundProbe();
  BackgroundProbe(const BackgroundProbe&) = delete;
  BackgroundProbe& operator=(const BackgroundProbe&) = delete;

  bool done() const;
  std::string current_rung() const;       // "cpu" until the probe reports
  std::optional<Result<ProbeOutcome>> result() const;  // empty until done
  void wait() const;

 private:
  struct State;
  explicit BackgroundProbe(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace rung
