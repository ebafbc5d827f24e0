#include "probe/launch.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "os/file_identity.h"
#include "rung/json_text.h"
#include "os/loader_search.h"
#include "os/json_input.h"
#include "os/path_trust.h"
#include "probe/cache.h"
#include "rung/ladder.h"
#include "runtime/search.h"

namespace rung {
namespace {

// What a record says came of opening a build.
constexpr const char* kLoaded = "loaded";
constexpr const char* kRefused = "refused";        // its path failed the trust check
constexpr const char* kNotOpened = "not opened";   // after a build that fits perfectly (stop_at_perfect_fit)
constexpr const char* kFailed = "failed";          // anything else: a damaged file, a load that failed

nlohmann::json record_found(const RuntimeSearch& search, const RuntimeSearchOptions& options, const Hardware& hardware) {
  nlohmann::json searched = nlohmann::json::array();
  for (const auto& d : search.searched) searched.push_back({{"path", d.path.string()}, {"origin", origin_name(d.origin)}, {"exists", d.exists}});
  nlohmann::json builds = nlohmann::json::array();
  for (const auto& c : search.candidates) {
    FileIdentity id;
    const bool present = identity_of(c.library, id);
    // As load_runtime_build checks it; without the check (allowed), every path counts as passing.
    const bool trusted = options.allow_writable_by_others || (present && check_path_trusted(c.library).ok());
    builds.push_back({{"library", c.library.string()},
                      {"origin", origin_name(c.origin)},
                      {"present", present},
                      {"device", id.device},
                      {"inode", id.inode},
                      {"size", id.size},
                      {"mtime_ns", id.mtime_ns},
                      {"ctime_ns", id.ctime_ns},
                      {"trusted", trusted}});
  }
  nlohmann::json platforms = nlohmann::json::array();
  for (const Platform* p : recognise_platforms(hardware)) platforms.push_back(p->id);
  return {{"searched", searched}, {"builds", builds}, {"platforms", platforms}, {"allow_writable", options.allow_writable_by_others}};
}

std::string opened_as(const RuntimeBuild& b, const nlohmann::json& found) {
  if (b.loaded) return kLoaded;
  if (b.skipped_reason.starts_with("not opened")) return kNotOpened;
  return found.value("trusted", true) ? kFailed : kRefused;
}

struct Vouched {
  std::size_t index = 0;
  std::string choice_reason;
  nlohmann::json chosen_build;  // what opening the chosen build gave, as kept; null in a record older than that
};

// What opening the chosen build gave, for a later launch that answers without opening it.
nlohmann::json kept_facts(const RuntimeBuild& b) {
  return {{"version", b.version}, {"api_version", b.api_version}, {"providers", b.providers}, {"score", b.score}, {"score_reason", b.score_reason}};
}

// The chosen build as the record keeps what opening it gave (kept_facts), unopened:
// its api null (rung/runtime.h). Nullopt when the record holds no whole facts.
std::optional<RuntimeBuild> recorded_build(const nlohmann::json& f) {
  if (!f.is_object()) return std::nullopt;
  auto version = f.find("version");
  auto providers = f.find("providers");
  auto api = f.contains("api_version") ? json_integer(f["api_version"], 1, 10'000) : std::nullopt;
  auto score = f.contains("score") ? json_integer(f["score"], 1, 100) : std::nullopt;
  if (version == f.end() || !version->is_string() || providers == f.end() || !providers->is_array() || !api || !score) return std::nullopt;
  RuntimeBuild b;
  b.loaded = true;
  b.version = version->get<std::string>();
  b.api_version = static_cast<int>(*api);
  for (const auto& p : *providers) {
    if (!p.is_string()) return std::nullopt;
    b.providers.push_back(p.get<std::string>());
  }
  b.score = static_cast<int>(*score);
  b.score_reason = json_string_or(f, "score_reason", "");
  return b;
}

// Whether every library the build needs is still where the loader would find it:
// the one thing about a load that its file's identity does not fix.
bool dependencies_resolve(const std::filesystem::path& library) {
  // What this process already holds satisfies a name without a search, as in the loader.
  auto libs = resolve_dependencies(library, LoaderPaths::of_this_process(), objects_loaded_in_this_process());
  if (!libs) return false;
  for (const auto& l : *libs) {
    if (!l.loads()) return false;
  }
  return true;
}

// The build the kept record vouches for, when it was made with the builds found now.
std::optional<Vouched> vouched(const std::string& kept_seen, const nlohmann::json& found) {
  if (kept_seen.empty()) return std::nullopt;
  const nlohmann::json kept = parse_json_or(kept_seen, nlohmann::json());
  if (!kept.is_object() || !kept.contains("found") || kept["found"] != found) return std::nullopt;
  const auto& builds = found["builds"];
  auto chosen = kept.contains("chosen") ? json_integer(kept["chosen"], 0, static_cast<std::int64_t>(builds.size()) - 1) : std::nullopt;
  auto opened = kept.find("opened");
  if (!chosen || opened == kept.end() || !opened->is_array() || opened->size() != builds.size()) return std::nullopt;
  const auto chosen_index = static_cast<std::size_t>(chosen.value());  // read once here: g++ 12 warns that a later *chosen may be uninitialized
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const auto& o = (*opened)[i];
    if (!o.is_string()) return std::nullopt;
    const std::string what = o.get<std::string>();
    if (i == chosen_index) {
      if (what != kLoaded) return std::nullopt;
      continue;
    }
    // A loser that loaded, was refused by its (unchanged) trust, or was never opened after a perfect fit stays a loser;
    // one that failed might load now, for reasons outside its file.
    if (what == kRefused && builds[i]["trusted"] == true) return std::nullopt;
    if (what != kLoaded && what != kRefused && what != kNotOpened) return std::nullopt;
  }
  return Vouched{chosen_index, json_string_or(kept, "choice_reason", "as the probe cache records"), kept.value("chosen_build", nlohmann::json())};
}

}  // namespace

bool same_builds(const std::string& kept_seen, const std::string& found) {
  if (kept_seen.empty() || found.empty()) return false;
  const nlohmann::json kept = parse_json_or(kept_seen, nlohmann::json());
  return kept.is_object() && kept.contains("found") && kept["found"] == parse_json_or(found, nlohmann::json());
}

Result<LaunchRuntimes> discover_launch_runtimes(const RuntimeSearchOptions& options, const Hardware& hardware,
                                                const std::filesystem::path& cache_file, bool allow_warm, bool open_vouched) {
  auto search = search_runtimes(options);
  if (!search) return search.error();
  // Taken before anything is opened: a build that changes while the others load makes the next launch open every one.
  const nlohmann::json found = record_found(*search, options, hardware);
  LaunchRuntimes out;
  out.found = json_text(found);
  if (allow_warm) {
    if (auto v = vouched(read_kept_builds(cache_file), found)) {
      const auto& chosen = search->candidates[v->index].library;
      const std::string not_opened =
          fmt::format("not opened: the probe cache {} names {}, and no build found changed since it was written", cache_file.string(), chosen.string());
      // A launch that only answers takes the chosen build as recorded, while nothing outside its file has gone.
      std::optional<RuntimeBuild> recorded;
      if (!open_vouched && dependencies_resolve(chosen)) recorded = recorded_build(v->chosen_build);
      auto warm = discover_found_runtimes(*search, options, hardware, v->index, not_opened, recorded ? &*recorded : nullptr);
      // The chosen build failed to open after all (its dependencies went): open every one, as without a cache.
      if (warm && warm->chosen == v->index) {
        out.discovery = std::move(*warm);
        out.discovery.choice_reason = v->choice_reason;
        out.warm = true;
        return out;
      }
    }
  }
  auto cold = discover_found_runtimes(*search, options, hardware);
  if (!cold) return cold.error();
  nlohmann::json opened = nlohmann::json::array();
  for (std::size_t i = 0; i < cold->builds.size(); ++i) opened.push_back(opened_as(cold->builds[i], found["builds"][i]));
  out.seen = json_text(nlohmann::json{{"found", found},
                            {"opened", opened},
                            {"chosen", *cold->chosen},
                            {"choice_reason", cold->choice_reason},
                            {"chosen_build", kept_facts(cold->builds[*cold->chosen])}});
  out.discovery = std::move(*cold);
  return out;
}

}  // namespace rung
