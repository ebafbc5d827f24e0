// The probe's cache file: the decision and the fingerprint it was made under.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "rung/probe.h"
#include "rung/result.h"

namespace rung {

inline constexpr int kProbeCacheSchema = 1;

struct CacheRead {
  std::optional<ProbeOutcome> outcome;  // set when the file is valid for this fingerprint
  std::string ignored_because;          // why a file that exists was not trusted ("" when absent or valid)
};

CacheRead read_probe_cache(const std::filesystem::path& file, const std::string& fingerprint);
Status write_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const ProbeOutcome& outcome);

}  // namespace rung
