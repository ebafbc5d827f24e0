// A rung's files checked before anything loads them: the provider files beside
// the build, every library they pull in (resolved as the dynamic loader would),
// and whether an ONNX Runtime provider comes from the same ONNX Runtime as the
// core beside it. Said in the words of the library table (rungs/libraries.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "os/loader_search.h"
#include "rung/ladder.h"
#include "rung/runtime.h"

namespace rung {

struct RungDependencies {
  std::vector<std::string> files;           // the rung's own files: provider files beside the build, or the plugin
  std::vector<ResolvedLibrary> libraries;   // what those files pull in, in the loader's order
  std::string provider_version;             // the ONNX Runtime version the provider file was built from, when it says
  std::vector<std::string> problems;        // in words, in the loader's order, a version mismatch last
  // A rung that cannot load whatever the loader does: a file of its own is
  // absent, or the provider is from another ONNX Runtime (the bridge between a
  // provider and the core is not a stable interface, so it is never loaded).
  bool certain_to_fail = false;

  std::string words() const;  // the problems joined by "; "; empty when none
};

RungDependencies check_rung_dependencies(const RungSpec& rung, const RuntimeBuild& build,
                                         const LoaderPaths& paths = LoaderPaths::of_this_process());

// The ONNX Runtime version a provider library was built from, read from the
// version string ONNX Runtime compiles into it (its .rodata holds "1.29.0"):
// `core_version` when that is among its strings, else the one ONNX Runtime-shaped
// version it holds; empty when it holds none or several.
std::string provider_onnxruntime_version(const std::filesystem::path& provider, const std::string& core_version);

}  // namespace rung
