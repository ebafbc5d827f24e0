#include "rung/runtime.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>

#include "onnxruntime_c_api.h"
#include "os/dynamic_library.h"
#include "os/environment.h"
#include "os/library_files.h"
#include "os/path_trust.h"
#include "rung/path_text.h"
#include "rung/ladder.h"
#include "os/child_environment.h"
#include "runtime/ort_api.h"
#include "runtime/search.h"
#include "rungs/module.h"
#include "rung/setting_names.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// ONNX Runtime 1.29 and 1.30 start Microsoft's telemetry client with every
// environment: it truncates /tmp/mat-debug-<pid>.log (following a link planted
// there), reads /tmp/.ses and keeps a database under
// ~/.cache/Microsoft/DeveloperTools/. ORT_DISABLE_TELEMETRY=1 keeps it from
// starting (docs/security.md). The engine never changes its host's environment:
// it lends the variable to its workers alone (a value the host set stands).
void keep_onnxruntime_telemetry_off_in_workers() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!system_variable("ORT_DISABLE_TELEMETRY")) set_child_variable("ORT_DISABLE_TELEMETRY", "1");
  });
}

}  // namespace

int compiled_api_version() { return ORT_API_VERSION; }

void keep_onnxruntime_telemetry_off_in_this_process() { set_own_variable_unless_set("ORT_DISABLE_TELEMETRY", "1"); }

const char* origin_name(SearchOrigin origin) {
  switch (origin) {
    case SearchOrigin::kExplicit: return "explicit";
    case SearchOrigin::kEnvironment: return "RUNG_ORT_DIR";
    case SearchOrigin::kBesideExecutable: return "beside executable";
    case SearchOrigin::kBesideLibrary: return "beside the engine library";
    case SearchOrigin::kInstalledShare: return "installed";
  }
  return "?";
}

bool RuntimeBuild::has_provider(std::string_view name) const {
  return std::find(providers.begin(), providers.end(), name) != providers.end();
}

std::size_t RuntimeDiscovery::loaded_count() const {
  return static_cast<std::size_t>(std::count_if(builds.begin(), builds.end(), [](const RuntimeBuild& b) { return b.loaded; }));
}

namespace {

// The runtime loads libraries from its own directory: the provider libraries the ladder
// names (onnxruntime_providers_cuda, _shared, QnnHtp, ...) and, on Windows, DirectML.dll.
// Each runs in this process as much as the runtime does, so each one there is held to the
// runtime's own rule. Looked up by name: a system directory's other libraries are not read.
Status check_libraries_beside(const fs::path& library) {
  std::set<std::string> names = {library_file_name("DirectML")};
  for (const auto& rung : known_rungs()) names.insert(rung.provider_libraries.begin(), rung.provider_libraries.end());
  for (const auto& name : names) {
    const fs::path file = library.parent_path() / path_from_utf8(name);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    if (auto s = check_path_trusted(file); !s) {
      return Error{s.error().code, fmt::format("{}, which it loads from beside itself: {}", file.string(), s.error().message)};
    }
  }
  return {};
}

}  // namespace

Result<RuntimeBuild> load_runtime_build(const fs::path& library, bool allow_writable_by_others) {
  if (!library.is_absolute()) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: refused, a runtime is loaded by absolute path only (never by bare name or from the current directory)", library.string())};
  }
  std::error_code ec;
  const fs::path& absolute = library;
  if (!fs::exists(absolute, ec)) return missing_path(library);
  if (!fs::is_regular_file(absolute, ec)) return Error{ErrorCode::kNotFound, fmt::format("{}: not a library file", library.string())};
  if (!allow_writable_by_others) {
    // Another user who can change the library, or any directory on its way, could run their code in ours.
    Status trusted = check_path_trusted(absolute);
    if (trusted) trusted = check_libraries_beside(absolute);
    if (!trusted) {
      const std::string allow = setting_name(Setting::kAllowWritableRuntime);
      return Error{trusted.error().code, fmt::format("{}: refused, {}; fix that{}", library.string(), trusted.error().message,
                                                     allow.empty() ? "" : ", or allow it with " + allow)};
    }
  }
  keep_onnxruntime_telemetry_off_in_workers();
  if (auto problem = library_file_problem(absolute); !problem.empty()) {
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: not loadable: {}", library.string(), problem)};
  }
  std::string why;
  DynamicLibrary handle = open_library(absolute, why);
  if (!handle) return Error{ErrorCode::kLoadFailed, fmt::format("{}: not loadable: {}", library.string(), why)};
  using GetApiBase = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBase>(find_symbol(handle, "OrtGetApiBase"));
  if (get_base == nullptr) {
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: not an ONNX Runtime build (no OrtGetApiBase)", library.string())};
  }
  // A damaged or hostile build may hand back no table, or one with holes: said, never called through.
  const OrtApiBase* base = get_base();
  if (base == nullptr) {
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: not a usable ONNX Runtime build (OrtGetApiBase returned no API table)", library.string())};
  }
  if (base->GetApi == nullptr) {
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: not a usable ONNX Runtime build (its API table has no GetApi)", library.string())};
  }
  auto info = ort::query_build(base, ORT_API_VERSION, kMinimumApiVersion);
  if (!info) return Error{info.error().code, fmt::format("{}: {}", library.string(), info.error().message)};
  keep_loaded_forever(std::move(handle));

  RuntimeBuild build;
  build.library = absolute;
  build.loaded = true;
  build.version = info->version;
  build.api_version = info->api_version;
  build.providers = info->providers;
  build.api = info->api;
  return build;
}

int score_build(const std::vector<std::string>& providers, const Hardware& hardware, std::string* reason) {
  int best = 1;
  std::string why = "CPU only: no provider in it matches this device";
  for (const Platform* platform : recognise_platforms(hardware)) {
    if (platform->build_fit <= best) continue;
    for (const auto& rung_name : platform->rungs) {
      const RungSpec* rung = find_rung(rung_name);
      // A rung every platform holds (XNNPACK, on an Arm CPU) makes a build fit no platform in particular.
      const RungModule* m = rung != nullptr ? module_of(*rung) : nullptr;
      if (m != nullptr && on_every_platform(*m)) continue;
      if (rung != nullptr && std::find(providers.begin(), providers.end(), rung->provider) != providers.end()) {
        best = platform->build_fit;
        why = fmt::format("{} for the {}", rung->display, platform->description);
        break;
      }
    }
  }
  if (reason != nullptr) *reason = why;
  return best;
}

std::optional<std::size_t> choose_build(const std::vector<RuntimeBuild>& builds, std::string* reason) {
  // RUNG_ORT_DIR wins outright; otherwise the best score, ties to search order.
  std::optional<std::size_t> chosen;
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const auto& b = builds[i];
    if (!b.loaded || b.score <= 0) continue;
    if (!chosen) {
      chosen = i;
      continue;
    }
    const auto& current = builds[*chosen];
    bool env = b.origin == SearchOrigin::kEnvironment, current_env = current.origin == SearchOrigin::kEnvironment;
    if ((env && !current_env) || (env == current_env && b.score > current.score)) chosen = i;
  }
  if (chosen && reason != nullptr) {
    const auto& c = builds[*chosen];
    if (c.origin == SearchOrigin::kEnvironment) {
      *reason = "RUNG_ORT_DIR wins outright";
    } else {
      auto ties = std::count_if(builds.begin(), builds.end(), [&](const RuntimeBuild& b) { return b.loaded && b.score == c.score; });
      *reason = fmt::format("best fit (score {}: {}){}", c.score, c.score_reason, ties > 1 ? ", first of equals in search order" : "");
    }
  }
  return chosen;
}

// RUNG_ORT_DIR wins outright: when no build there can be used, that is the
// answer, naming the directory and why — never another build in its place.
Status check_environment_build(const RuntimeDiscovery& d) {
  const auto dir = std::find_if(d.searched.begin(), d.searched.end(), [](const SearchedDirectory& s) { return s.origin == SearchOrigin::kEnvironment; });
  if (dir == d.searched.end()) return {};
  std::string why;
  for (const auto& b : d.builds) {
    if (b.origin != SearchOrigin::kEnvironment) continue;
    if (b.loaded && b.score > 0) return {};
    if (why.empty()) why = b.skipped_reason.empty() ? fmt::format("{}: cannot be used", b.library.string()) : b.skipped_reason;
  }
  if (why.empty()) return Error{ErrorCode::kNoRuntime, fmt::format("RUNG_ORT_DIR {} holds no ONNX Runtime library", dir->path.string())};
  return Error{ErrorCode::kNoRuntime, fmt::format("RUNG_ORT_DIR {}: {}", dir->path.string(), why)};
}

namespace {

// The directory the application named, when it must serve (RuntimeSearchOptions::explicit_dir_must_serve):
// no usable build there is an error of the first refusal's kind, naming the directory and why.
Status check_explicit_build(const RuntimeDiscovery& d, bool keeps_its_kind) {
  const auto dir = std::find_if(d.searched.begin(), d.searched.end(), [](const SearchedDirectory& s) { return s.origin == SearchOrigin::kExplicit; });
  if (dir == d.searched.end()) return {};
  const RuntimeBuild* refused = nullptr;
  for (const auto& b : d.builds) {
    if (b.origin != SearchOrigin::kExplicit) continue;
    if (b.loaded && b.score > 0) return {};
    if (refused == nullptr) refused = &b;
  }
  const auto kind = [keeps_its_kind](ErrorCode own) { return keeps_its_kind ? own : ErrorCode::kNoRuntime; };
  if (refused == nullptr) return Error{kind(ErrorCode::kNoRuntime), fmt::format("the runtime directory {} holds no ONNX Runtime library", dir->path.string())};
  const ErrorCode code = kind(refused->loaded ? ErrorCode::kNoRuntime : refused->skipped_code);
  const std::string why = refused->loaded ? fmt::format("{}: fits no rung this device has (score 0)", refused->library.string())
                                          : refused->skipped_reason;
  return Error{code, fmt::format("the runtime directory {} cannot serve: {}", dir->path.string(), why)};
}

}  // namespace

Result<RuntimeDiscovery> discover_runtimes(const RuntimeSearchOptions& options, const Hardware& hardware) {
  auto search = search_runtimes(options);
  if (!search) return search.error();
  return discover_found_runtimes(*search, options, hardware);
}

Result<RuntimeDiscovery> discover_found_runtimes(const RuntimeSearch& search, const RuntimeSearchOptions& options, const Hardware& hardware,
                                                 std::optional<std::size_t> only, const std::string& why_not_opened,
                                                 const RuntimeBuild* recorded) {
  RuntimeDiscovery discovery;
  discovery.searched = search.searched;
  bool perfect = false;
  for (std::size_t i = 0; i < search.candidates.size(); ++i) {
    const auto& candidate = search.candidates[i];
    RuntimeBuild build;
    const bool skip_for_perfect = perfect && candidate.origin != SearchOrigin::kEnvironment;
    if (skip_for_perfect || (only && *only != i)) {
      build.library = candidate.library;
      build.origin = candidate.origin;
      build.skipped_reason = skip_for_perfect ? "not opened: an earlier build already fits this device perfectly" : why_not_opened;
      discovery.builds.push_back(std::move(build));
      continue;
    }
    if (only && recorded != nullptr) {
      build = *recorded;
      build.library = candidate.library;
      build.origin = candidate.origin;
      discovery.builds.push_back(std::move(build));
      continue;
    }
    auto loaded = load_runtime_build(candidate.library, options.allow_writable_by_others);
    if (loaded) {
      build = std::move(*loaded);
      build.score = score_build(build.providers, hardware, &build.score_reason);
      perfect = options.stop_at_perfect_fit && build.score >= 4;
    } else {
      build.library = candidate.library;
      build.skipped_reason = loaded.error().message;
      build.skipped_code = loaded.error().code;
    }
    build.origin = candidate.origin;
    discovery.builds.push_back(std::move(build));
  }

  RUNG_RETURN_IF_ERROR(check_environment_build(discovery));
  // Judged when every build was opened (a warm launch opens only the one its cache vouches for).
  if (options.explicit_dir_must_serve && !only) {
    RUNG_RETURN_IF_ERROR(check_explicit_build(discovery, options.explicit_refusal_keeps_its_kind));
  }
  discovery.chosen = choose_build(discovery.builds, &discovery.choice_reason);
  if (!discovery.chosen) {
    std::string message = "no usable ONNX Runtime build found.";
    for (const auto& dir : discovery.searched) {
      message += fmt::format("\n  searched {} ({}{})", dir.path.string(), origin_name(dir.origin), dir.exists ? "" : ", missing");
    }
    for (const auto& b : discovery.builds) message += fmt::format("\n  skipped {}", b.skipped_reason);
    message += fmt::format("\nFetch the builds rung is tested with: {}", kFetchCommand);
    return Error{ErrorCode::kNoRuntime, message};
  }
  return discovery;
}

}  // namespace rung
