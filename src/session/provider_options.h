// Provider options per rung, built in one place: the only code that names a
// vendor's or provider's option keys.
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
  std::map<std::string, std::string> extra;  // passed through verbatim (plugin EP knobs, overrides)
};

// The key/value options a rung's provider is given (exposed for tests of
// providers that cannot run on this machine).
std::map<std::string, std::string> provider_option_map(const RungSpec& rung, const ProviderSettings& settings);

// Per-run options: what a run inside a job asks of the provider. The HTP is
// clocked up (burst) for a job's runs and back to default after each, not
// between images while nothing runs.
std::map<std::string, std::string> run_option_map(const RungSpec& rung);

}  // namespace rung
