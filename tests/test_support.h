// Paths the tests use: the fetched runtime builds and models, fixtures, built binaries.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/tensor.h"

namespace rung::test {

inline std::filesystem::path deps_dir() { return RUNG_TEST_DEPS_DIR; }
inline std::filesystem::path fixtures_dir() { return RUNG_TEST_FIXTURES; }
inline std::filesystem::path binary_dir() { return RUNG_TEST_BINARY_DIR; }
inline std::filesystem::path cli_path() { return RUNG_TEST_CLI; }
inline std::filesystem::path sim_ep_path() { return RUNG_TEST_SIM_EP; }
inline std::filesystem::path fake_libraries_dir() { return RUNG_TEST_FAKE_LIBRARIES; }
inline std::filesystem::path worker_path() { return binary_dir() / "rung-probe-worker"; }
// A copy of the command in `dir`: the `rung` front and the rung-full it becomes (cli/front.cpp); returns the front's path.
std::filesystem::path copy_cli_to(const std::filesystem::path& dir);

inline std::filesystem::path runtime_dir(const std::string& version) {
  return deps_dir() / "runtimes" / ("onnxruntime-" + version);
}
inline std::filesystem::path model_path(const std::string& rel) { return deps_dir() / "models" / rel; }

// Whether the ONNX Runtime 1.30.0 tools/fetch-deps.sh fetches for the architecture these
// tests were built for carries the TensorRT, CUDA and WebGPU providers besides the CPU:
// onnxruntime-node's linux/x64 build does, its linux/arm64 build carries the CPU alone.
// Tests of what rung says about such a build hold to the one fetched for this build.
inline constexpr bool kFetched130CarriesGpuProviders =
#if defined(__x86_64__)
    true;
#else
    false;
#endif

// A fresh empty directory under the system temp dir, removed by the caller or left for inspection.
std::filesystem::path make_temp_dir(const std::string& prefix);

// A path quoted for the shell a test's command line runs in (test paths hold no single quote).
inline std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// The whole file as text ("" when it cannot be read).
std::string read_file(const std::filesystem::path& path);

// Makes `dir`/plugins holding a copy of the simulated accelerator plugin, and returns it.
std::filesystem::path make_plugin_dir(const std::filesystem::path& dir);

// Makes `dir` a runtime directory as a GPU package would: the real 1.30.0 core (a
// symlink), the real provider bridge, the named fake provider files built "from"
// ONNX Runtime `provider_version` (tests/fake-libraries), and vendor/ holding a copy
// of every fake vendor library, which the providers find through RUNPATH $ORIGIN/vendor.
// Returns the core library's path.
std::filesystem::path make_fake_gpu_runtime(const std::filesystem::path& dir, const std::string& provider_version,
                                            const std::vector<std::string>& providers);

// Runs a command with /bin/sh, capturing stdout and stderr separately.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::string& command);

// Headless Chromium on a file: a fresh profile in `profile_dir`, nothing in the
// background, no network. `mode` is "--dump-dom" or "--screenshot=FILE ...".
// Reports a test failure (and returns it) when chromium is not installed.
CommandResult run_chromium(const std::string& mode, const std::filesystem::path& html, const std::filesystem::path& profile_dir);

// A PNG decoded to RGBA (libpng's simplified API); empty when it does not decode.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};
Image decode_png(const std::filesystem::path& file);

// Checks `record` against a JSON Schema with Debian's python3-jsonschema: empty
// when valid, else the validator's messages (a missing validator is a test failure).
std::string schema_errors(const std::filesystem::path& schema, const std::filesystem::path& record);
std::filesystem::path schema_path(const std::string& name);  // schemas/NAME in the source tree
std::filesystem::path source_path(const std::string& rel);   // a file of the source tree ("docs/abi.md")

// Lends the software GPU adapter the build linked beside rung (tools/fetch-deps.sh fetches it
// unless RUNG_SKIP_SOFTWARE_GPU=1) to every child process, as --software-gpu does, for one
// scope. `skip_reason` is empty when it is lent, else why a WebGPU case cannot run here.
class LentSoftwareGpu {
 public:
  LentSoftwareGpu();
  ~LentSoftwareGpu();
  LentSoftwareGpu(const LentSoftwareGpu&) = delete;
  LentSoftwareGpu& operator=(const LentSoftwareGpu&) = delete;
  const std::string& skip_reason() const { return skip_reason_; }

 private:
  std::string skip_reason_;
};

// An environment variable set (or unset, with nullptr) for one scope. Out of line (test_support.cc):
// a bench that uses it then holds no call of the system's (tools/check-os-seam.py).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A float32 tensor of rank 1 holding `values`.
Tensor float_tensor(const std::string& name, const std::vector<float>& values);

// How many times `needle` occurs in `text`, not overlapping.
std::size_t occurrences(const std::string& text, const std::string& needle);

}  // namespace rung::test
