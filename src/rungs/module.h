// A rung is one module (ggml's backend registry, read and not copied): each
// in-tree execution provider is one file in src/rungs/ that defines one
// descriptor, `RungModule rung_module_<id>()`. The build lists those files
// (cmake/rung_modules.cmake), so a new provider is that file alone: the ladder,
// the platform table's ladders, session options, provider and run options, the
// library names doctor explains and the docs' table are all read from here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rungs/provider_settings.h"

namespace rung {

// What a provider asks of the session it joins, beyond its own options.
struct SessionQuirks {
  // ONNX Runtime refuses a DirectML session that keeps the memory pattern or
  // runs nodes in parallel.
  bool memory_pattern = true;
  bool parallel_execution = true;
  // The provider runs its own thread pool (XNNPACK): it is given the session's
  // threads, and ONNX Runtime's own pool is kept to one so the two do not fight.
  bool owns_thread_pool = false;
};

// Every platform's ladder (with `needs` deciding per device).
inline const std::string kEveryPlatform = "*";

struct RungModule {
  // Id, display name, provider, append method, model form, engines, provider files.
  RungSpec spec;
  // Where it stands on every ladder: lower is tried first. Unique; the CPU floor is last.
  int rank = 0;
  // The platforms (ladder.cpp's table of ids) whose ladders hold it, or kEveryPlatform.
  std::vector<std::string> platforms;
  // The hardware it needs beyond its platforms (nullptr: nothing more), and that in words.
  bool (*needs)(const Hardware&) = nullptr;
  std::string needs_text;
  // What its provider is told (nullptr: nothing), and per run inside a job.
  std::map<std::string, std::string> (*provider_options)(const ProviderSettings&) = nullptr;
  std::map<std::string, std::string> run_options;
  SessionQuirks quirks;
  // A rung a build may well not carry (XNNPACK: the builds for phones and boards
  // do): left off the ladder of a build without it, rather than refused there.
  bool only_if_built = false;
  // It draws on a Vulkan adapter, so a software one lent (lavapipe) serves it.
  bool runs_on_vulkan = false;
  // One sentence for the docs and doctor: what it is and where it runs.
  std::string about;
};

// Whether it stands on every platform's ladder (below the platform's own rungs).
inline bool on_every_platform(const RungModule& m) {
  return m.platforms.size() == 1 && m.platforms.front() == kEveryPlatform;
}

// Every in-tree rung's module, in ladder order (rank), the CPU floor last.
const std::vector<RungModule>& rung_modules();
// The module of an in-tree rung; nullptr for a plugin EP library's rung.
const RungModule* module_of(const RungSpec& rung);

}  // namespace rung
