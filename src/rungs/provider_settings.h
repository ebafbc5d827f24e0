// What a session asks of a rung's provider, in rung's words; each rung's module
// (src/rungs/<rung>.cpp) turns it into its provider's own option keys.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include "rung/ladder.h"

namespace rung {

struct ProviderSettings {
  // Where compiling providers keep engines/programs; one directory per fingerprint
  // and precision (MIGraphX leaves precision out of its own key).
  std::filesystem::path engine_cache_dir;
  bool fp16 = false;                       // compile an fp16 engine (never for an embedder)
  std::size_t trt_workspace_bytes = std::size_t{512} << 20;
  std::string openvino_device = "GPU";
  int threads = 0;                         // the session's intra-op threads (0: ONNX Runtime's choice)
  std::map<std::string, std::string> extra;  // passed through verbatim (plugin EP knobs, overrides)
};

// The key/value options a rung's provider is given: its module's, then `extra`
// over them (exposed for tests of providers that cannot run on this machine).
std::map<std::string, std::string> provider_option_map(const RungSpec& rung, const ProviderSettings& settings);

// Per-run options: what a run inside a job asks of the provider (QNN's HTP is
// clocked up for a job's runs and back to default after each).
std::map<std::string, std::string> run_option_map(const RungSpec& rung);

}  // namespace rung
