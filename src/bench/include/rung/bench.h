// `rung bench`: honest numbers per rung. Every model on every rung in its own
// child process: session build (cold, and from the engine cache where the rung
// compiles one), first inference, warm latency percentiles, throughput, spread,
// peak resident memory, and whether the outputs match the CPU rung's.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rung/input_spec.h"
#include "rung/limits.h"
#include "rung/model.h"
#include "rung/result.h"
#include "rung/runtime.h"
#include "rung/tolerance.h"

namespace rung {

// One file to measure. Files given the same name are forms of one model (an
// f32 file and its int8, fp16 or a16w8 forms, a compiled engine): the report
// shows that model once, one row per form and rung, with each form's time
// against the f32 form's on the same rung ("× f32").
struct BenchModel {
  std::string name;                 // the model's name: "ppocr_det_v4"
  std::filesystem::path path;
  InputSpec inputs;                 // how to feed it without the application (dims, fixed values, recorded tensors)
  std::string form = {};            // the form's label ("f32", "i8", "trt"); "": the file's own numeric form's name
};

// --shape INPUT=1x3x640x640 as run_bench applies it (rung/input_spec.h parses it).
using BenchShape = InputShape;

struct BenchOptions {
  std::vector<BenchModel> models;
  // Every model's input of this name gets this whole shape (its dynamic axes set,
  // its fixed axes checked). kInvalidArgument naming the input when no model has
  // it, its rank differs, a fixed axis differs or it exceeds max_tensor_bytes.
  std::vector<BenchShape> shapes;
  std::vector<std::string> rungs;   // rung names to measure; empty: every rung of this device's ladder. The CPU always runs: it is the floor and the reference.
  int warmup = 3;                   // untimed runs after the first inference
  int runs = 30;                    // timed runs per rung and round
  double duration_s = 0;            // > 0: time runs for this long instead of counting them
  int rounds = 1;                   // > 1: every rung again, the order rotated, ratios paired within a round
  int threads = 0;                  // intra-op threads; 0: ONNX Runtime's default
  bool zero_inputs = false;         // feed zeros instead of seeded random values
  std::filesystem::path input_dir;  // recorded tensors (.pb) for every model, instead of generated ones
  bool compare_bare = false;        // CPU rung: interleave a bare OrtApi::Run loop and report the ratio
  Tolerance tolerance = Tolerance::close();
  RuntimeSearchOptions runtimes;
  std::filesystem::path hardware_root = "/";
  std::vector<std::filesystem::path> plugin_dirs;  // plus RUNG_PLUGIN_DIR: each plugin EP library is a rung
  std::filesystem::path worker;     // default: RUNG_PROBE_WORKER, beside the executable, libexec
  std::chrono::milliseconds deadline{900'000};  // per child; a compiling rung's cold build can take minutes
  std::uint64_t worker_memory_limit_mb = kWorkerMemoryDefault;  // MiB a worker may hold (rung/limits.h); 0: no limit
  std::uint64_t seed = 20260919;
  // Called as each child starts (runs_done 0), then about every 200 ms while it
  // times runs (from a helper thread; never two calls at once). runs_total 0 with --duration.
  std::function<void(const std::string& model, const std::string& rung, int round, int runs_done, int runs_total)> on_progress;
};

struct LatencySummary {
  int count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0, stddev = 0;
  double cv = 0;                    // stddev / mean
};

inline constexpr double kHighVariation = 0.10;  // a coefficient of variation above this is warned about

enum class OutputMatch { kReference, kMatch, kMismatch, kNotCompared };
const char* output_match_name(OutputMatch m);  // "reference", "match", "mismatch", "not compared"

// A paired ratio and its interval, as the probe's speed rule computes them
// (core/speed_rule.h): run k of this row over run k of the row it is against,
// within the same round; the median of those ratios and its 99% sign-test
// interval. With fewer than 8 pairs the interval is the pairs' whole range.
struct PairedRatio {
  double ratio = 0;
  double low = 0;
  double high = 0;
  int pairs = 0;
};

struct BenchRow {
  std::string model_form;           // the form (file) of the model this row ran: "f32", "i8" (the label, see BenchModel::form)
  std::string rung;                 // "cpu", "webgpu", a plugin's name
  std::string display;              // "CPU"
  std::string provider;             // "CPUExecutionProvider"
  std::string provider_version;
  std::string form;                 // numeric form executed: "f32", "f16", "i8", ...
  std::string model_id;             // what it computes: "ppocr_det_v4", "ppocr_det_v4_f16"
  bool ok = false;
  std::string failure_class;        // "provider_unavailable", "build_failed", "inputs_rejected", "run_failed", "crashed", "timed_out", "worker_failed"
  std::string failure_reason;
  std::optional<double> build_cold_ms;
  std::optional<double> build_cached_ms;
  double first_run_ms = 0;
  LatencySummary latency;           // every timed run of every round
  // Each timed run's time, round after round in run order, so that a peer (bench
  // compare) can judge from the runs themselves rather than from a summary: every
  // run, or when more than kMaxKeptRuns ran, that many evenly spaced in run order.
  std::vector<double> run_ms;
  static constexpr std::size_t kMaxKeptRuns = 2'000;  // ~14 KiB of a row: enough for the bootstrap, small for the registry
  std::vector<double> round_p50_ms;
  double throughput_per_s = 0;      // timed runs / time they took (one stream)
  double peak_rss_mb = 0;           // the largest of the rounds' child processes
  std::optional<double> ratio_to_floor;  // x_floor's ratio (kept for records' readers)
  std::optional<PairedRatio> x_floor;    // this row's time over the CPU floor's, the same form
  std::optional<PairedRatio> x_f32;      // this row's time over the f32 form's on the same rung (absent without an f32 form)
  OutputMatch match = OutputMatch::kNotCompared;
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  Tolerance tolerance;              // what "match" meant: the options' for f32, approximate() for an fp16 engine
  std::string match_detail;         // the first mismatch, or why there is no comparison
  std::vector<std::string> evidence;
  // Placement, from ONNX Runtime's profile of one run (absent when none was read):
  // nodes run by a provider other than the CPU's, every node run, and their share of kernel time.
  struct Placement {
    int placed_nodes = 0;
    int total_nodes = 0;
    double time_share = 0;
    std::string summary;            // "RungSimAccelerator ran 212 of 418 nodes, 61% of run time"
  };
  std::optional<Placement> placement;
  std::optional<double> bare_p50_ms;     // compare_bare: the bare loop's p50 in the same process
  bool high_variation() const { return ok && latency.cv > kHighVariation; }
  bool computes_something_else() const { return match == OutputMatch::kMismatch; }
};

// One form of a model: one file.
struct BenchFormReport {
  std::string label;                // "f32", "i8": unique within the model
  std::filesystem::path path;
  std::string sha256;
  std::string stable_sha256;
  std::uintmax_t size_bytes = 0;
  std::string form;                 // the file's own numeric form
  std::string form_evidence;
  std::string model_id;
  std::int64_t opset = 0;
  int nodes = 0;
  std::string inputs_described;
};

// A model: the fields below describe its first form (its f32 form when it has
// one), `forms` every form, and `rows` every form × rung, form by form.
struct BenchModelReport {
  std::string name;
  std::filesystem::path path;
  std::string sha256;
  std::string stable_sha256;        // the same without doc strings: what the registry matches evidence on
  std::uintmax_t size_bytes = 0;
  std::string form;                 // the file's own numeric form
  std::string form_evidence;
  std::string model_id;             // name plus the file's form
  std::int64_t opset = 0;
  int nodes = 0;
  std::string inputs_described;
  std::vector<BenchRow> rows;       // per form (in `forms`' order): the CPU first, then the ladder's order
  std::vector<BenchFormReport> forms;
};

struct BenchReport {
  std::string date;                 // UTC, ISO 8601
  std::string hostname;
  std::string os;                   // "Linux 6.1.0-18-amd64 x86_64"
  std::string cpu;
  int logical_cpus = 0;
  std::string hardware_identity;
  std::string runtime_version;
  std::filesystem::path runtime_library;
  int api_version = 0;
  BenchOptions settings;            // as run (no callbacks)
  std::string inputs_mode;          // "random", "zeros", "recorded: DIR"
  std::vector<BenchModelReport> models;
  std::vector<std::string> warnings;
};

// Measures every model on every selected rung. An Error (kInvalidArgument or
// kNotFound) for bad input: a missing or unparsable model, an unknown rung,
// runs < 1, recorded inputs of the wrong shape; nothing is measured further.
// kNoRuntime when no usable ONNX Runtime build is found.
Result<BenchReport> run_bench(const BenchOptions& options);

}  // namespace rung
