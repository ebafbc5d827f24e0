#include "probe/attempts.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "os/utc_now.h"

namespace rung {
namespace {

constexpr int kMaxStrikes = 1000;
// Longer than any death's words: a file holding more is not rung's.
constexpr std::size_t kMaxNoteChars = 4096;

std::optional<StrikeNote> parse_note(const nlohmann::json& j, const std::string& key, JsonFields& outer) {
  JsonFields f(j, fmt::format("last of '{}'", key.substr(0, 64)));
  StrikeNote note{f.text("launch", ""), f.text("when", ""), f.text("what", "")};
  f.require(note.launch.size() + note.when.size() + note.what.size() <= kMaxNoteChars,
            fmt::format("holds more than {} characters", kMaxNoteChars));
  if (auto s = f.finish(); !s) {
    outer.require(false, s.error().message);
    return std::nullopt;
  }
  return note;
}

}  // namespace

Result<StrikeFile> parse_strike_file(const std::string& text) {
  auto j = parse_json(text);
  if (!j) return j.error();
  JsonFields f(*j, "strikes");
  StrikeFile out;
  out.fingerprint = f.text("fingerprint");
  if (const auto* s = f.object("strikes"); s != nullptr) {
    f.require(s->size() <= kMaxLedgerKeys, fmt::format("'strikes' names {} builds; a ledger holds at most {}", s->size(), kMaxLedgerKeys));
    for (auto it = s->begin(); f.ok() && it != s->end(); ++it) {
      auto n = json_integer(*it, 0, kMaxStrikes);
      f.require(n.has_value(), fmt::format("strikes of '{}' must be a count from 0 to {}", it.key().substr(0, 64), kMaxStrikes));
      if (n) out.strikes[it.key()] = static_cast<int>(*n);
    }
  }
  if (const auto* last = f.object("last", /*required=*/false); last != nullptr) {
    f.require(last->size() <= kMaxLedgerKeys, fmt::format("'last' names {} builds; a ledger holds at most {}", last->size(), kMaxLedgerKeys));
    for (auto it = last->begin(); f.ok() && it != last->end(); ++it) {
      if (auto note = parse_note(*it, it.key(), f)) out.last[it.key()] = std::move(*note);
    }
  }
  RUNG_RETURN_IF_ERROR(f.finish());
  return out;
}

Result<AttemptFile> parse_attempt_file(const std::string& text) {
  auto j = parse_json(text);
  if (!j) return j.error();
  JsonFields f(*j, "attempt");
  AttemptFile out{f.text("fingerprint"), f.text("rung"), f.text("model"), f.text("launch", ""), f.text("when", "")};
  f.require(!out.rung.empty(), "names no rung");
  RUNG_RETURN_IF_ERROR(f.finish());
  return out;
}

AttemptLedger::AttemptLedger(std::filesystem::path cache_dir, std::string fingerprint_hash)
    : dir_(std::move(cache_dir)), fingerprint_(std::move(fingerprint_hash)) {
  std::error_code ec;
  const auto strike_file = dir_ / "strikes.json", attempt_file = dir_ / "attempt";
  bool rewrite = false;
  if (std::filesystem::exists(std::filesystem::symlink_status(strike_file, ec))) {
    auto text = read_input_file(strike_file, FileKind::kDocument);
    auto strikes = text ? parse_strike_file(*text) : Result<StrikeFile>(text.error());
    if (!strikes) {
      ignored_.push_back(fmt::format("ignored {}: {}", strike_file.string(), strikes.error().message));
      rewrite = true;
    } else if (strikes->fingerprint == fingerprint_) {
      strikes_ = std::move(strikes->strikes);
      last_ = std::move(strikes->last);
    }
  }
  if (std::filesystem::exists(std::filesystem::symlink_status(attempt_file, ec))) {
    auto text = read_input_file(attempt_file, FileKind::kDocument);
    auto attempt = text ? parse_attempt_file(*text) : Result<AttemptFile>(text.error());
    if (!attempt) {
      ignored_.push_back(fmt::format("ignored {}: {}", attempt_file.string(), attempt.error().message));
    } else if (attempt->fingerprint == fingerprint_) {
      leftover_ = attempt->rung;
      strikes_[leftover_] = std::min(strikes_[leftover_] + 1, kMaxStrikes);
      last_[leftover_] = {attempt->launch, attempt->when, "the process died while building it"};
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

const StrikeNote* AttemptLedger::last(const std::string& key) const {
  auto it = last_.find(key);
  return it == last_.end() ? nullptr : &it->second;
}

Status AttemptLedger::begin(const std::string& rung, const std::string& model, const std::string& launch) {
  nlohmann::json j = {{"rung", rung}, {"model", model}, {"fingerprint", fingerprint_}, {"launch", launch}, {"when", utc_now()}};
  return write_file_atomically(dir_ / "attempt", json_text(j));
}

void AttemptLedger::end(const std::string& rung) {
  std::error_code ec;
  std::filesystem::remove(dir_ / "attempt", ec);
  last_.erase(rung);
  if (strikes_.erase(rung) > 0) save();  // strikes count only in a row
}

int AttemptLedger::strike(const std::string& key, const std::string& launch, const std::string& what) {
  const StrikeNote* before = last(key);
  if (before != nullptr && !launch.empty() && before->launch == launch) return strikes(key);  // this launch's strike is counted
  if (strikes_.count(key) == 0 && strikes_.size() >= kMaxLedgerKeys) return 0;
  strikes_[key] = std::min(strikes(key) + 1, kMaxStrikes);
  last_[key] = {launch, utc_now(), what.substr(0, kMaxNoteChars / 2)};
  save();
  return strikes_[key];
}

void AttemptLedger::save() {
  nlohmann::json last = nlohmann::json::object();
  for (const auto& [key, note] : last_) last[key] = {{"launch", note.launch}, {"when", note.when}, {"what", note.what}};
  nlohmann::json j = {{"fingerprint", fingerprint_}, {"strikes", strikes_}, {"last", last}};
  (void)write_file_atomically(dir_ / "strikes.json", json_text(j));
}

}  // namespace rung
