#include "probe/fingerprint.h"

#include <nlohmann/json.hpp>

namespace rung {

Result<std::string> make_fingerprint(const FingerprintInputs& in, FileHashCache& hashes) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : in.options->models) {
    // A missing model is a fact of the fingerprint, not an error: when it appears, the probe runs again.
    auto digest = hashes.hash(m.path);
    models.push_back({{"name", m.name}, {"sha256", digest ? *digest : std::string("missing")}, {"inputs", m.inputs.canonical()}});
  }
  nlohmann::json ladder = nlohmann::json::array();
  for (const auto& r : *in.ladder) {
    // The display name says which adapter a rung runs on (a lent software GPU renames WebGPU's).
    nlohmann::json rung = {{"name", r.name}, {"display", r.display}, {"provider", r.provider}};
    if (!r.plugin_library.empty()) {
      auto digest = hashes.hash(r.plugin_library);
      rung["plugin_sha256"] = digest ? *digest : std::string("missing");
    }
    ladder.push_back(rung);
  }
  FileStamp rt;
  stamp_of(in.build->library, rt);
  const auto& o = *in.options;
  nlohmann::json fp = {
      {"runtime",
       {{"version", in.build->version},
        {"api_version", in.build->api_version},
        {"path_sha256", sha256_hex(std::filesystem::weakly_canonical(in.build->library).string())},
        {"size", rt.size},
        {"mtime_ns", rt.mtime_ns},
        {"providers", in.build->providers}}},
      {"device", in.hardware->identity()},
      {"models", models},
      {"probe_models", in.probe_models},
      {"ladder", ladder},
      {"settings",
       {{"runs", o.runs}, {"acceptance_ratio", o.acceptance_ratio}, {"atol", o.tolerance.atol}, {"rtol", o.tolerance.rtol},
        {"threads", o.threads}, {"seed", o.seed}}}};
  return fp.dump();
}

}  // namespace rung
