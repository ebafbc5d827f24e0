#include "probe/cache.h"

#include <fmt/format.h>

#include "os/atomic_file.h"
#include "os/read_file.h"
#include "probe/outcome.h"

namespace rung {

CacheRead read_probe_cache(const std::filesystem::path& file, const std::string& fingerprint) {
  CacheRead read;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return read;
  auto j = nlohmann::json::parse(read_text_file(file), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    read.ignored_because = fmt::format("{} is not JSON (truncated or damaged)", file.string());
    return read;
  }
  if (!j.contains("schema") || j["schema"] != kProbeCacheSchema) {
    read.ignored_because = fmt::format("{} has schema {}, this rung reads {}", file.string(),
                                       j.contains("schema") ? j["schema"].dump() : "none", kProbeCacheSchema);
    return read;
  }
  if (!j.contains("fingerprint") || j["fingerprint"].dump() != nlohmann::json::parse(fingerprint).dump()) {
    read.ignored_because = fmt::format("{} was written for another fingerprint (runtime, device, models or settings changed)",
                                       file.string());
    return read;
  }
  try {
    read.outcome = outcome_from_json(j.at("outcome"));
    read.outcome->from_cache = true;
    read.outcome->cache_file = file;
  } catch (const nlohmann::json::exception& e) {
    read.ignored_because = fmt::format("{} is malformed: {}", file.string(), e.what());
  }
  return read;
}

Status write_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const ProbeOutcome& outcome) {
  nlohmann::json j = {{"schema", kProbeCacheSchema},
                      {"written_by", "rung " RUNG_VERSION},
                      {"fingerprint", nlohmann::json::parse(fingerprint)},
                      {"outcome", outcome_json(outcome)}};
  return write_file_atomically(file, j.dump(2));
}

}  // namespace rung
