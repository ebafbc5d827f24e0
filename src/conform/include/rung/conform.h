// `rung conform`: what each rung computes correctly, test by test, against
// ONNX's own expected outputs. Suites use ONNX's backend-test layout (a folder
// per test: model.onnx and test_data_set_N/ with input_K.pb and output_K.pb).
// Every rung runs the whole suite in one worker process; a test that crashes
// or hangs it is recorded and the rest go on in a new one.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rung/limits.h"
#include "rung/result.h"
#include "rung/runtime.h"
#include "rung/tolerance.h"

namespace rung {

// The outcomes, in the order tables and records list them: "pass", "mismatch",
// "not placed", "runtime refused", "rung cannot feed it", "timed out", "crashed".
const std::vector<std::string>& conform_outcomes();

// One column: a rung on an ONNX Runtime build.
struct ConformRung {
  std::string rung = "cpu";  // "cpu", a ladder rung ("webgpu"), or a plugin EP library (a path ending in .so)
  std::string runtime;       // "": the build rung chooses; a version ("1.28.2"); or a directory or library path
  std::map<std::string, std::string> provider_options;  // given to the provider verbatim

  // "NAME[,ort=VERSION|DIR][,option.KEY=VALUE...]"
  static Result<ConformRung> parse(const std::string& spec);
};

struct ConformOptions {
  // Folders of tests (or of suites: a folder whose subfolders are suites); a
  // test is a folder with model.onnx. Empty: Debian's libonnx-testdata.
  std::vector<std::filesystem::path> suites;
  std::vector<ConformRung> rungs;  // empty: this device's ladder on the chosen build
  std::string filter;              // a regular expression (RE2) searched in each test's id ("node/test_abs"), at most 1000 bytes
  Tolerance tolerance = Tolerance::onnx_backend();
  std::string tolerance_name = "onnx_backend";
  int threads = 1;                 // intra-op threads per session
  RuntimeSearchOptions runtimes;
  std::vector<std::filesystem::path> plugin_dirs;  // plugin EP libraries: rungs of the default ladder
  std::filesystem::path hardware_root = "/";
  std::filesystem::path worker;    // default: RUNG_PROBE_WORKER, beside the executable, libexec
  std::filesystem::path work_dir;  // default: a fresh directory under the temp dir, removed afterwards
  std::chrono::milliseconds deadline{120'000};  // per test (and per worker start)
  std::uint64_t worker_memory_limit_mb = kWorkerMemoryDefault;  // MiB a worker may hold (rung/limits.h); 0: no limit
  std::function<void(const std::string&)> on_progress;
};

struct ConformTest {
  std::string id;                  // "node/test_abs": the path below the suite folder's parent
  std::string suite;               // "node"
  std::filesystem::path dir;
  std::string op;                  // the operator it tests ("Abs"; "Conv + Relu" for a small model), for the grid's rows
  std::string skipped;             // why it is not run ("a download stub: ..."); empty when it runs
};

// One test on one rung.
struct ConformResult {
  std::string outcome;             // one of conform_outcomes(), or "skipped"
  std::string reason;              // ONNX Runtime's own reason, rung's, the first mismatch, or where the nodes ran
  double max_abs = 0;              // the largest error over every output and data set
  double max_rel = 0;
  int data_sets = 0;
  double ms = 0;
  std::vector<std::pair<std::string, int>> placement;  // provider -> nodes it ran, from ONNX Runtime's profile
};

struct ConformColumn {
  std::string id;                  // "cpu@1.30.0", "webgpu@1.30.0", "RungSimAccelerator@1.30.0"
  std::string label;               // "CPU · ONNX Runtime 1.30.0"
  std::string rung;                // as asked: "cpu", "webgpu", a plugin library
  std::string display;             // "CPU", "WebGPU on lavapipe (software)"
  std::string provider;            // "CPUExecutionProvider"
  std::string runtime_version;
  std::filesystem::path runtime_library;
  std::map<std::string, std::string> provider_options;
  std::string unavailable;         // why the rung could not start at all (its tests then have no results)
  std::vector<ConformResult> results;  // one per test, in ConformReport::tests order
  std::map<std::string, int> counts() const;  // outcome -> tests
};

// One row of the grid's summary: an operator, its tests, and their counts per rung.
struct ConformOperator {
  // "problem": some test did not pass on some rung (mismatch, runtime refused,
  // rung cannot feed it, timed out, crashed); "not placed": none did, but some
  // rung's provider left a test to the CPU; "pass": every test passed on every
  // rung; "skipped": none of its tests is run (download stubs).
  std::string group;
  std::string name;                        // "Add"; "(not run)" for download stubs
  std::vector<std::size_t> tests;          // indices into ConformReport::tests, in id order
  std::vector<std::map<std::string, int>> counts;  // per column (ConformReport::columns order): outcome -> tests; "skipped" too
};

struct ConformReport {
  std::vector<std::filesystem::path> suites;
  std::string tolerance_name;
  Tolerance tolerance;
  std::vector<ConformTest> tests;
  std::vector<ConformColumn> columns;

  std::size_t skipped() const;
  // The operators: problems first, then "not placed", "pass", "skipped"; by name within each group.
  std::vector<ConformOperator> operators() const;
  // The columns a table shows, as indices into `columns`: the CPU's first, then
  // the others as asked; rungs that could not start are left out (`unavailable_note`).
  std::vector<std::size_t> shown_columns() const;
  // The rungs that could not start, one line per reason: "TensorRT, CUDA: not available here — REASON"; empty when none.
  std::vector<std::string> unavailable_note() const;
  std::string table() const;                        // the summary per rung
  std::string details(const std::string& column_id = "") const;  // every test that did not pass, with its reason
  std::string to_json(const std::string& command_line) const;    // schemas/conform-record.schema.json
  // The grid: a row per operator with its counts per rung (problems first, the
  // rest folded), its tests under it, one cell per test and rung; rungs that could not start in a note above it.
  std::string to_html() const;
  // Atomically (a temporary name, then renamed): an error never leaves half a file.
  Status write_json(const std::filesystem::path& path, const std::string& command_line) const;
  Status write_html(const std::filesystem::path& path) const;
};

// Errors: kInvalidArgument or kNotFound for a usage problem (no such suite, a
// bad filter, a rung spec that does not parse, no test left, a bad --ort-dir);
// kNoRuntime when a column's ONNX Runtime build is not there. A rung that cannot start is a
// column with `unavailable` set, not an error.
Result<ConformReport> run_conform(const ConformOptions& options);

}  // namespace rung
