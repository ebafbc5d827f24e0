#include "probe/fingerprint.h"

#include <nlohmann/json.hpp>

#include "rung/json_text.h"
#include "rung/directory.h"
#include "rung/model.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

std::string hash_or_missing(FileHashCache& hashes, const fs::path& file) {
  auto digest = hashes.hash(file);
  return digest ? *digest : std::string("missing");
}

// What a model is fed, by content: recorded tensors count by their bytes, not by the directory's name.
nlohmann::json inputs_of(const InputSpec& spec, FileHashCache& hashes) {
  nlohmann::json j = {{"dims", spec.dims}, {"values", spec.values}};
  if (spec.tensors_dir.empty()) return j;
  nlohmann::json tensors = nlohmann::json::object();
  auto entries = list_directory(spec.tensors_dir);
  if (entries) {
    for (const auto& e : *entries) {
      std::error_code ec;
      if (fs::is_regular_file(e, ec)) tensors[e.filename().string()] = hash_or_missing(hashes, e);
    }
  }
  j["tensors"] = entries ? tensors : nlohmann::json("unreadable");
  return j;
}

// The provider libraries a rung loads beside the runtime, by content: a new CUDA provider is a new verdict.
nlohmann::json provider_libraries_of(const RungSpec& rung, const RuntimeBuild& build, FileHashCache& hashes) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& lib : rung.provider_libraries) j[lib] = hash_or_missing(hashes, build.library.parent_path() / path_from_utf8(lib));
  return j;
}

}  // namespace

Result<std::string> make_fingerprint(const FingerprintInputs& in, FileHashCache& hashes) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : in.options->models) {
    // A missing model is a fact of the fingerprint, not an error: when it appears, the probe runs again.
    nlohmann::json model = {{"name", m.name}, {"sha256", hash_or_missing(hashes, m.path)}, {"inputs", inputs_of(m.inputs, hashes)}};
    // A derived form is what a quantising rung runs: a new one (or a changed one) decides again.
    for (const auto& d : m.derived) model["derived"].push_back({{"form", numeric_form_name(d.form)}, {"sha256", hash_or_missing(hashes, d.path)}});
    models.push_back(std::move(model));
  }
  nlohmann::json ladder = nlohmann::json::array();
  for (const auto& r : *in.ladder) {
    // The display name says which adapter a rung runs on (a lent software GPU renames WebGPU's).
    nlohmann::json rung = {{"name", r.name}, {"display", r.display}, {"provider", r.provider}, {"form", static_cast<int>(r.form)}};
    if (!r.plugin_library.empty()) rung["plugin_sha256"] = hash_or_missing(hashes, path_from_utf8(r.plugin_library));
    if (!r.provider_libraries.empty()) rung["provider_libraries"] = provider_libraries_of(r, *in.build, hashes);
    ladder.push_back(rung);
  }
  FileStamp rt;
  stamp_of(in.build->library, rt);
  const auto& o = *in.options;
  nlohmann::json fp = {
      {"runtime",
       {{"version", in.build->version},
        {"api_version", in.build->api_version},
        // The path itself (the outcome names it too): hashing it would cost a warm launch OpenSSL's first-use set-up, some 1 ms.
        {"path", std::filesystem::weakly_canonical(in.build->library).string()},
        {"sha256", hash_or_missing(hashes, in.build->library)},
        {"size", rt.size},
        {"mtime_ns", rt.mtime_ns},
        {"providers", in.build->providers}}},
      {"device", in.hardware->identity()},
      {"models", models},
      {"probe_models", in.probe_models},
      {"ladder", ladder},
      {"settings",
       {{"runs", o.probe_runs}, {"acceptance_ratio", o.acceptance_ratio}, {"atol", o.tolerance.atol}, {"rtol", o.tolerance.rtol},
        {"threads", o.threads}, {"seed", o.seed}, {"min_gain", o.min_gain}, {"confidence", o.confidence},
        {"time_budget_s", o.time_budget_s}, {"max_pairs", o.max_pairs}, {"min_placed_share", o.min_placed_share},
        // A verdict reached under another deadline, or in another kind of process, is not this one's:
        // "timed out" under 1 ms says nothing about 60 s.
        {"deadline_ms", o.probe_deadline.count()}, {"isolate", o.isolate}}}};
  return json_text(fp);
}

}  // namespace rung
