#include "probe/attempts.h"

#include <nlohmann/json.hpp>

#include "os/atomic_file.h"
#include "os/read_file.h"

namespace rung {
namespace {

nlohmann::json read_json(const std::filesystem::path& p) { return nlohmann::json::parse(read_text_file(p), nullptr, false); }

}  // namespace

AttemptLedger::AttemptLedger(std::filesystem::path cache_dir, std::string fingerprint_hash)
    : dir_(std::move(cache_dir)), fingerprint_(std::move(fingerprint_hash)) {
  auto strikes = read_json(dir_ / "strikes.json");
  if (strikes.is_object() && strikes.value("fingerprint", "") == fingerprint_ && strikes.contains("strikes")) {
    strikes_ = strikes["strikes"].get<std::map<std::string, int>>();
  }
  std::error_code ec;
  if (std::filesystem::exists(dir_ / "attempt", ec)) {
    auto attempt = read_json(dir_ / "attempt");
    if (attempt.is_object() && attempt.value("fingerprint", "") == fingerprint_) {
      leftover_ = attempt.value("rung", "");
      if (!leftover_.empty()) ++strikes_[leftover_];
    }
    std::filesystem::remove(dir_ / "attempt", ec);
    save();
  }
}

int AttemptLedger::strikes(const std::string& rung) const {
  auto it = strikes_.find(rung);
  return it == strikes_.end() ? 0 : it->second;
}

Status AttemptLedger::begin(const std::string& rung, const std::string& model) {
  nlohmann::json j = {{"rung", rung}, {"model", model}, {"fingerprint", fingerprint_}};
  return write_file_atomically(dir_ / "attempt", j.dump());
}

void AttemptLedger::end(const std::string& rung) {
  std::error_code ec;
  std::filesystem::remove(dir_ / "attempt", ec);
  if (strikes_.erase(rung) > 0) save();  // strikes count only in a row
}

void AttemptLedger::save() {
  nlohmann::json j = {{"fingerprint", fingerprint_}, {"strikes", strikes_}};
  (void)write_file_atomically(dir_ / "strikes.json", j.dump());
}

}  // namespace rung
