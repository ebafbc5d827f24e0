// `rung parity`: runs one model on two sides (two rungs, two ONNX Runtime
// builds, or a model and its converted form) over the same inputs and gates on
// what the product decides, not only on tensors. Each side runs in its own
// worker process, one input at a time; the report puts counts beside changes.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rung/input_spec.h"
#include "rung/limits.h"
#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

// A model and where it runs; or outputs stored on disk ("expected:DIR").
struct ParitySide {
  std::filesystem::path model;
  // "expected:DIR": no model runs; each input set's outputs are DIR/<input set>/output_K.pb
  // (an ONNX test folder's test_data_set_N/output_K.pb).
  std::filesystem::path expected;
  std::string runtime;      // "": the build rung chooses; a version ("1.28.2", "1.29"); or a directory or library path
  std::string rung = "cpu"; // "cpu", a ladder rung ("cuda", "webgpu"), or a plugin EP library (a path ending in .so)
  int threads = 0;          // intra-op threads; 0: ONNX Runtime's default
  std::map<std::string, std::string> provider_options;  // given to the provider verbatim

  // "MODEL[,rung=R][,ort=VERSION|DIR][,threads=N][,option.KEY=VALUE...]" or "expected:DIR"
  static Result<ParitySide> parse(const std::string& spec);
  bool stored() const { return !expected.empty(); }
  std::string describe() const;  // "det.onnx on cpu, ONNX Runtime 1.28.2, 1 thread"
};

struct ParityOptions {
  ParitySide ref;
  ParitySide cand;
  // Inputs: a directory of tensors (.pb or .npy files, or one subdirectory of them
  // per input set, as the ONNX test suites store them; an ONNX test folder, with
  // model.onnx beside its test_data_set_N/, is one) or of images; or, when
  // `random` > 0, that many seeded random input sets.
  std::filesystem::path inputs_dir;
  std::size_t random = 0;
  std::uint64_t seed = 0;
  // The gate file (JSON: preprocessing, input spec, gates). Empty: the tensor
  // gate at Polygraphy's default tolerances (atol 1e-5, rtol 1e-5) on every output.
  std::filesystem::path gate_file;
  std::filesystem::path preprocess_file;  // image preprocessing when no gate file declares one
  // The largest input tensor made or read (a file, an image, a shape from the
  // gate file): larger is refused before it is allocated. Unset: the gate
  // file's inputs.max_tensor_mb, else kDefaultMaxTensorBytes.
  std::optional<std::uint64_t> max_tensor_bytes;
  RuntimeSearchOptions runtimes;
  std::filesystem::path worker;           // default: RUNG_PROBE_WORKER, beside the executable, libexec
  std::filesystem::path work_dir;         // default: a fresh directory under the temp dir, removed afterwards
  std::chrono::milliseconds deadline{300'000};  // per worker step (session build, one input)
  std::uint64_t worker_memory_limit_mb = kWorkerMemoryDefault;  // MiB a worker may hold (rung/limits.h); 0: no limit
  std::function<void(const std::string&)> on_progress;
  bool show = false;  // every input's decoded decisions on both sides, in the report
  // --input-spec: dims and values for the model's inputs, over the gate file's "inputs".
  std::optional<InputSpec> input_spec;
  // record_parity_side's destination: a directory not yet there (made whole or not at all).
  std::filesystem::path record_dir;
};

struct GateOutcome {
  std::string decoder;               // "tensor", "classification", "slots", "boxes", "embedding", "text", "mask"
  std::string title;                 // "text · softmax_11.tmp_0"
  bool passed = false;
  std::string summary;               // always counts beside changes
  std::vector<std::string> details;  // per band, per output, which items differ
  std::vector<std::string> shown;    // --show: every input's decoded decisions on both sides
  std::string stats_json;            // the numbers, as a JSON object
  // A decision gate (boxes, text, classification with a threshold, slots, mask)
  // counts the inputs where the reference decided nothing: it learned nothing
  // there, and a gate that learned nothing on every input fails as vacuous.
  bool decision = false;
  std::size_t judged = 0;            // inputs (items of a batch) it judged
  std::size_t vacuous = 0;           // of those, where the reference decided nothing
};

// Where one side ran, in the JSON report: what the release registry matches
// a report against a release on.
struct ParitySideRun {
  std::string model_file;
  std::string model_sha256;
  std::string model_stable_sha256;  // without doc strings
  std::string rung;                 // "cpu", a ladder rung, or a plugin library's rung name ("rung_sim_ep")
  std::string runtime_version;      // "1.30.0"
  std::string device;               // the hardware identity
  std::string placement;            // from one profiled run: "RungSimAccelerator ran 212 of 418 nodes, 61% of run time"
};

// A side recorded to be compared on another machine (record_parity_side): what
// ran where, beside its inputs and outputs. Read back as "expected:DIR".
struct ParityRecording {
  ParitySideRun run;                 // model, rung, ONNX Runtime version, device
  std::string architecture;          // "aarch64", "x86_64": the machine as its kernel names it
  std::string system;                // "Linux 6.18.44 aarch64"
  std::vector<std::string> outputs;  // the model's outputs in order: output_K.pb is the K-th
  std::size_t input_sets = 0;

  // "det.onnx · cpu · ONNX Runtime 1.30.0 · recorded on aarch64 (cpu BCM2835)"
  std::string describe() const;
  std::string to_json() const;  // as DIR/side.json holds it
};

struct ParityReport {
  std::string ref;   // described, with the build that ran it
  std::string cand;
  ParitySideRun ref_run;
  ParitySideRun cand_run;
  std::size_t inputs = 0;
  std::vector<GateOutcome> gates;

  bool passed() const;
  std::string text() const;
  std::string to_json() const;
  Status write_json(const std::filesystem::path& path) const;  // atomically
};

// Runs the comparison. Errors: kInvalidArgument or kNotFound for a usage or
// input problem (sides that do not line up, an empty directory, an image that
// does not decode, a bad gate file, a bad --ort-dir); kNoRuntime when a side's
// ONNX Runtime build is not there; kRuntime when a side could not run (its session failed,
// its worker crashed or timed out).
Result<ParityReport> run_parity(const ParityOptions& options);

// Runs the ref side alone over the inputs and stores each input set's tensors and
// outputs in options.record_dir (SET/input_K.pb, SET/output_K.pb, and side.json),
// for `--ref expected:DIR --inputs DIR` on another machine. The directory appears
// whole or not at all; one already there is refused. Errors as run_parity's.
Result<ParityRecording> record_parity_side(const ParityOptions& options);

// The files a gate file names besides itself (a text gate's character list), as
// absolute or gate-relative paths resolved: inputs a command's outputs must never
// replace. Empty when the gate file cannot be read (the run itself says why).
std::vector<std::filesystem::path> files_named_by_gate_file(const std::filesystem::path& gate_file);

}  // namespace rung
