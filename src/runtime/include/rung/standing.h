// How each rung of a ladder stands in a given runtime build, before any probe:
// is the provider in the build, are the files it loads beside it, would the
// dynamic loader find every library they need, and are they from the same ONNX
// Runtime as the core? Nothing is loaded to answer.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/ladder.h"
#include "rung/runtime.h"

namespace rung {

struct ProviderFile {
  std::string name;
  bool present = false;
};

// A library a rung's files need, and where the dynamic loader would find it.
struct NeededLibrary {
  std::string name;       // "libcuda.so.1"
  std::string what;       // "the NVIDIA driver", "CUDA 13's cuBLAS"; the name when rung does not know it
  std::string needed_by;  // "libonnxruntime_providers_cuda.so"
  std::string path;       // empty when the loader would not find it
};

struct RungStanding {
  RungSpec rung;
  bool provider_in_build = false;
  std::vector<ProviderFile> files;   // rung.provider_libraries beside the build, or the plugin library
  std::vector<NeededLibrary> needs;  // what those files pull in, in the loader's order
  std::string provider_version;      // the ONNX Runtime version the provider file was built from, when it says
  std::vector<std::string> problems; // "the NVIDIA driver (libcuda.so.1) is not installed", ...
  bool ready = false;                // provider in the build, its files present, no problem found
  // "ready to probe", "not in ONNX Runtime 1.29.0", or the problems joined by "; ":
  // the same words the probe gives when the rung fails for that reason.
  std::string note;
};

// Plugin EP libraries in `plugin_dirs` (and RUNG_PLUGIN_DIR) stand above the ladder's rungs, as the probe walks them;
// an Error when a plugin directory or library is refused (runtime/plugin_rungs.h).
Result<std::vector<RungStanding>> ladder_standing(const Ladder& ladder, const RuntimeBuild& build,
                                                  const std::vector<std::filesystem::path>& plugin_dirs = {},
                                                  bool allow_writable_plugins = false);

// The one sentence that says why `rung` cannot run on `build`, decided before
// anything loads it: "not in ONNX Runtime 1.29.0" (when build.providers is known),
// or a file of its own absent or from another ONNX Runtime ("ONNX Runtime's
// TensorRT provider (libonnxruntime_providers_tensorrt.so) is not beside
// libonnxruntime.so.1"). Empty when it may run. Doctor's standing, the probe,
// bench, conform, parity and prepare all give this sentence for these causes,
// never ONNX Runtime's own words for the load that would fail.
std::string rung_blocked_reason(const RungSpec& rung, const RuntimeBuild& build);

// One line for an about screen: "CPU · ONNX Runtime 1.30.0 · 3 builds found".
std::string about_line(const std::string& rung_display, const RuntimeDiscovery& discovery);

}  // namespace rung
