#include "probe/attempts.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "os/read_file.h"

namespace rung {
namespace {

// More rungs than any ladder holds: a file naming more is not rung's.
constexpr std::size_t kMaxRungs = 64;
constexpr int kMaxStrikes = 1000;

}  // namespace

Result<StrikeFile> parse_strike_file(const std::string& text) {
  auto j = parse_json(text);
  if (!j) return j.error();
  JsonFields f(*j, "strikes");
  StrikeFile out;
  out.fingerprint = f.text("fingerprint");
  if (const auto* s = f.object("strikes"); s != nullptr) {
    f.require(s->size() <= kMaxRungs, fmt::format("'strikes' names {} rungs; no ladder has more than {}", s->size(), kMaxRungs));
    for (auto it = s->begin(); f.ok() && it != s->end(); ++it) {
      auto n = json_integer(*it, 0, kMaxStrikes);
      f.require(n.has_value(), fmt::format("strikes of '{}' must be a count from 0 to {}", it.key().substr(0, 64), kMaxStrikes));
      if (n) out.strikes[it.key()] = static_cast<int>(*n);
    }
  }
  if (auto s = f.finish(); !s) return s.error();
  return out;
}

Result<AttemptFile> parse_attempt_file(const std::string& text) {
  auto j = parse_json(text);
  if (!j) return j.error();
  JsonFields f(*j, "attempt");
  AttemptFile out{f.text("fingerprint"), f.text("rung"), f.text("model")};
  f.require(!out.rung.empty(), "names no rung");
  if (auto s = f.finish(); !s) return s.error();
  return out;
}

AttemptLedger::AttemptLedger(std::filesystem::path cache_dir, std::string fingerprint_hash)
    : dir_(std::move(cache_dir)), fingerprint_(std::move(fingerprint_hash)) {
  std::error_code ec;
  const auto strike_file = dir_ / "strikes.json", attempt_file = dir_ / "attempt";
  bool rewrite = false;
  if (std::filesystem::exists(std::filesystem::symlink_status(strike_file, ec))) {
    auto text = read_regular_file(strike_file, 1 << 20);
    auto strikes = text ? parse_strike_file(*text) : Result<StrikeFile>(text.error());
    if (!strikes) {
      ignored_.push_back(fmt::format("ignored {}: {}", strike_file.string(), strikes.error().message));
      rewrite = true;
    } else if (strikes->fingerprint == fingerprint_) {
      strikes_ = std::move(strikes->strikes);
    }
  }
  if (std::filesystem::exists(std::filesystem::symlink_status(attempt_file, ec))) {
    auto text = read_regular_file(attempt_file, 1 << 20);
    auto attempt = text ? parse_attempt_file(*text) : Result<AttemptFile>(text.error());
    if (!attempt) {
      ignored_.push_back(fmt::format("ignored {}: {}", attempt_file.string(), attempt.error().message));
    } else if (attempt->fingerprint == fingerprint_) {
      leftover_ = attempt->rung;
      strikes_[leftover_] = std::min(strikes_[leftover_] + 1, kMaxStrikes);
    }
    std::filesystem::remove(attempt_file, ec);
    rewrite = true;
  }
  if (rewrite) save();
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
