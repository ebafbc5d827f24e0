// ONNX Runtime builds on disk: where rung looks, what each one reports, and
// which one a process uses. One OrtApi table per process, chosen before the probe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/result.h"

struct OrtApi;

namespace rung {

// Our headers' API version; a build is asked for this, or the highest it has below it.
int compiled_api_version();

// For rung's own processes (the CLI, the worker, the examples), first thing in
// main: ORT_DISABLE_TELEMETRY=1 unless already set, so ONNX Runtime's telemetry
// client never starts in them. The engine itself never changes an application's
// environment (it lends the variable to its workers only); an application that
// wants the same in its own process sets the variable before it starts the engine.
void keep_onnxruntime_telemetry_off_in_this_process();
// The oldest API version rung will use: older builds are skipped with that reason.
inline constexpr int kMinimumApiVersion = 17;

// What the default runtime locations are found from.
enum class KitAnchor { kProgram, kEngineLibrary };

struct RuntimeSearchOptions {
  // Searched first: a directory holding a libonnxruntime.so*, or subdirectories that do.
  std::optional<std::filesystem::path> explicit_dir;
  // Also search `runtimes/*/` beside the anchor (below) and the kit's share/rung/runtimes/*/ reached from it.
  bool include_default_locations = true;
  // The anchor: the running program's directory (rung's commands: bin/), or the
  // directory librung_engine was loaded from (an embedded engine: the kit's lib/,
  // never the application's executable). No install prefix is compiled in.
  KitAnchor defaults_from = KitAnchor::kProgram;
  // Overrides of the anchor directory and of the share directory (tests).
  std::optional<std::filesystem::path> executable_dir;
  std::optional<std::filesystem::path> share_dir;
  // Read rung's own variables (RUNG_ORT_DIR, RUNG_FORCE_RUNG, RUNG_PROBE_WORKER,
  // RUNG_SOFTWARE_GPU, ...: os/environment.h). The CLI does; an embedded engine
  // only when its application opts in (the C ABI's `environment` option).
  bool read_environment = true;
  // Also RUNG_PLUGIN_DIR: never for an embedded engine, whose rungs run in its
  // application's own process.
  bool read_plugin_environment = true;
  // Load libraries that other users can write to (refused by default).
  bool allow_writable_by_others = false;
  // The same for plugin EP libraries and their directories (runtime/plugin_rungs.h).
  bool allow_writable_plugins = false;
  // A build in explicit_dir that cannot serve is the answer (an error of its own
  // kind: refused for safety, not loadable), never another build in its place: an
  // application that names its runtime means it (the C ABI's runtime_dir, the CLI's
  // --ort-dir; `rung doctor` alone lists every build, the refused one with its reason).
  bool explicit_dir_must_serve = false;
  // That error's kind: kNoRuntime for the CLI (exit 3, as for a refused RUNG_ORT_DIR; a
  // directory that is missing or holds no library is refused earlier, exit 2), or the
  // refusal's own (kPermission, kLoadFailed, kNoRuntime) for the C ABI's callers.
  bool explicit_refusal_keeps_its_kind = false;
  // Stop loading candidates once one fits the hardware perfectly (the engine
  // wants start-up speed; `rung doctor` wants to see every build).
  bool stop_at_perfect_fit = false;
};

// Where a candidate came from, in search order.
enum class SearchOrigin { kExplicit, kEnvironment, kBesideExecutable, kBesideLibrary, kInstalledShare };
const char* origin_name(SearchOrigin origin);  // "explicit", "RUNG_ORT_DIR", "beside executable", "beside the engine library", "installed"

struct SearchedDirectory {
  std::filesystem::path path;
  SearchOrigin origin;
  bool exists = false;
};

// One libonnxruntime file that was found, and what came of loading it.
struct RuntimeBuild {
  std::filesystem::path library;
  SearchOrigin origin = SearchOrigin::kExplicit;
  bool loaded = false;
  std::string skipped_reason;            // why it was not loaded, when !loaded
  ErrorCode skipped_code = ErrorCode::kNoRuntime;  // and its kind: kPermission (refused for safety), kLoadFailed, ...
  std::string version;                   // "1.30.0"
  int api_version = 0;                   // the table rung holds: never call an entry newer than this
  std::vector<std::string> providers;    // GetAvailableProviders, in the build's order
  int score = 0;                         // fit to the hardware; 0 = unusable
  std::string score_reason;
  const OrtApi* api = nullptr;           // valid for the life of the process once loaded; null for a build a warm
                                         // probe took from its cache's record unopened (ProbeOptions::open_vouched_build)

  bool has_provider(std::string_view name) const;
};

struct RuntimeDiscovery {
  std::vector<SearchedDirectory> searched;
  std::vector<RuntimeBuild> builds;      // in search order
  std::optional<std::size_t> chosen;     // index into builds
  std::string choice_reason;

  const RuntimeBuild* chosen_build() const { return chosen ? &builds[*chosen] : nullptr; }
  std::size_t loaded_count() const;
};

// Loads one build. Never throws; a file that is not a usable build is an Error
// whose message names the file and the reason.
Result<RuntimeBuild> load_runtime_build(const std::filesystem::path& library, bool allow_writable_by_others = false);

// Searches, loads every candidate (losers stay mapped), scores each against the
// hardware and chooses one. An Error: kInvalidArgument when the explicit
// directory (the caller's) cannot be used; kNoRuntime when RUNG_ORT_DIR is
// empty or names no usable build, or when nothing usable loaded, its message
// listing what was searched and skipped.
Result<RuntimeDiscovery> discover_runtimes(const RuntimeSearchOptions& options, const Hardware& hardware);

// Which loaded build a process uses: one from RUNG_ORT_DIR outright, else the
// highest score, equal scores to the earliest in search order.
std::optional<std::size_t> choose_build(const std::vector<RuntimeBuild>& builds, std::string* reason = nullptr);

// The fit of a build's providers to the hardware: 4 a vendor provider on its own
// vendor's device, 3 OpenVINO on an Intel GPU, 2 WebGPU with some GPU, 1 CPU only.
int score_build(const std::vector<std::string>& providers, const Hardware& hardware, std::string* reason = nullptr);

// The command that fetches the builds rung is tested with.
inline constexpr const char* kFetchCommand = "tools/fetch-deps.sh";

}  // namespace rung
