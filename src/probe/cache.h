// The probe's cache file: the decision and the fingerprint it was made under.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/probe.h"
#include "rung/result.h"

namespace rung {

inline constexpr int kProbeCacheSchema = 1;

struct CacheRead {
  std::optional<ProbeOutcome> outcome;  // set when the file is valid for this fingerprint
  std::string ignored_because;          // why a file that exists was not trusted, naming it ("" when absent or valid)
  std::string builds_seen;              // the record of the builds it was made with (probe/launch.h), JSON text; "" when none
};

// The probe cache in a cache directory.
inline std::filesystem::path probe_cache_file(const std::filesystem::path& cache_dir) { return cache_dir / "probe.json"; }

// The record of the builds a cache file was made with (JSON text), read without
// judging the rest of it; "" when the file is absent, unreadable or keeps none.
std::string read_kept_builds(const std::filesystem::path& file);

// `ladder`: this device's rung names, best first, the floor last. An outcome
// that does not fit it (a rung not on it, another number of rungs, a chosen rung
// that was not taken) is ignored like a damaged file.
CacheRead read_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const std::vector<std::string>& ladder);
// The same on the file's text; `where` names it.
CacheRead parse_probe_cache(const std::string& text, const std::string& where, const std::string& fingerprint,
                            const std::vector<std::string>& ladder);
// `builds_seen`: the record of the builds the decision was made with (probe/launch.h), kept beside it.
Status write_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const ProbeOutcome& outcome,
                         const std::string& builds_seen = {});

}  // namespace rung
