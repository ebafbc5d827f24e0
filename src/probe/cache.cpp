#include "probe/cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "probe/fingerprint.h"
#include "probe/outcome.h"

namespace rung {
namespace {

// What a cached outcome may say on this ladder: its own rungs in its order, a
// chosen rung and fallback on it, the chosen one taken.
Status fits_ladder(const ProbeOutcome& o, const std::vector<std::string>& ladder) {
  auto bad = [](const std::string& why) { return Error{ErrorCode::kInvalidArgument, why}; };
  if (ladder.empty()) return bad("no ladder to check against");
  if (o.floor.rung != ladder.back()) return bad(fmt::format("its floor is '{}', this ladder's is '{}'", o.floor.rung, ladder.back()));
  if (o.rungs.size() + 1 != ladder.size()) {
    return bad(fmt::format("it holds {} rungs above the floor, this ladder {}", o.rungs.size(), ladder.size() - 1));
  }
  for (std::size_t i = 0; i < o.rungs.size(); ++i) {
    if (o.rungs[i].rung != ladder[i]) return bad(fmt::format("its rung {} is '{}', this ladder's is '{}'", i + 1, o.rungs[i].rung, ladder[i]));
  }
  const auto on_ladder = [&](const std::string& r) { return std::find(ladder.begin(), ladder.end(), r) != ladder.end(); };
  if (!on_ladder(o.chosen)) return bad(fmt::format("its chosen rung '{}' is not on this ladder", o.chosen));
  if (!on_ladder(o.fallback)) return bad(fmt::format("its fallback '{}' is not on this ladder", o.fallback));
  for (const auto& r : o.rungs) {
    if (r.rung == o.chosen && r.verdict != Verdict::kTaken) {
      return bad(fmt::format("its chosen rung '{}' has the verdict '{}'", o.chosen, verdict_name(r.verdict)));
    }
  }
  return {};
}

// The fingerprint is JSON text rung made (probe/fingerprint.h), parsed back
// through os's reader like any other; kept as a string should it ever not parse.
nlohmann::json fingerprint_json(const std::string& fingerprint) {
  auto j = parse_json(fingerprint);
  return j ? std::move(*j) : nlohmann::json(fingerprint);
}

}  // namespace

CacheRead parse_probe_cache(const std::string& text, const std::string& where, const std::string& fingerprint,
                            const std::vector<std::string>& ladder) {
  CacheRead read;
  auto ignore = [&](const std::string& why) {
    read.ignored_because = fmt::format("{}: {}", where, why);
    return read;
  };
  auto j = parse_json(text);
  if (!j) return ignore(j.error().message + " (truncated or damaged)");
  if (!j->is_object()) return ignore("is not a JSON object");
  if (!j->contains("schema") || (*j)["schema"] != kProbeCacheSchema) {
    return ignore(fmt::format("has schema {}, this rung reads {}", j->contains("schema") ? json_text((*j)["schema"]).substr(0, 40) : "none",
                              kProbeCacheSchema));
  }
  if (!j->contains("fingerprint")) return ignore("holds no fingerprint");
  if (const nlohmann::json now = fingerprint_json(fingerprint); (*j)["fingerprint"] != now) {
    // Said as what changed, so a re-probe is never a mystery: "the settings: threads 0 → 1".
    return ignore(fmt::format("was decided under other conditions: {}", fmt::join(fingerprint_changes((*j)["fingerprint"], now), "; ")));
  }
  if (!j->contains("outcome")) return ignore("holds no outcome");
  auto outcome = outcome_from_json((*j)["outcome"]);
  if (!outcome) return ignore("is malformed: " + outcome.error().message);
  if (auto s = fits_ladder(*outcome, ladder); !s) return ignore("does not fit this device's ladder: " + s.error().message);
  read.outcome = std::move(*outcome);
  read.outcome->from_cache = true;
  if (auto seen = j->find("builds_seen"); seen != j->end() && seen->is_object()) read.builds_seen = json_text(*seen);
  return read;
}

std::string read_kept_builds(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return {};
  auto j = read_json_file(file, FileKind::kDocument);
  if (!j || !j->is_object()) return {};
  auto seen = j->find("builds_seen");
  return seen != j->end() && seen->is_object() ? json_text(*seen) : std::string();
}

CacheRead read_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const std::vector<std::string>& ladder) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return {};
  auto text = read_input_file(file, FileKind::kDocument);
  if (!text) return {std::nullopt, text.error().message, {}};
  auto read = parse_probe_cache(*text, file.string(), fingerprint, ladder);
  if (read.outcome) read.outcome->cache_file = file;
  return read;
}

Status write_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const ProbeOutcome& outcome,
                         const std::string& builds_seen) {
  nlohmann::json j = {{"schema", kProbeCacheSchema},
                      {"written_by", "rung " RUNG_VERSION},
                      {"fingerprint", fingerprint_json(fingerprint)},
                      {"outcome", outcome_json(outcome)}};
  if (!builds_seen.empty()) j["builds_seen"] = parse_json_or(builds_seen, nlohmann::json::object());
  return write_file_atomically(file, json_text(j, 2));
}

}  // namespace rung
