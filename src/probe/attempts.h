// The in-process probe's crash rule. Before each session build above the CPU,
// what is being attempted is written to `attempt`; it is removed after. A launch
// that finds the file knows the last one died inside that attempt: a strike.
// Two strikes in a row and the rung is refused until the fingerprint changes.
// Two, not one, because quitting during a long compile leaves the same file.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rung/result.h"

namespace rung {

inline constexpr int kStrikesToRefuse = 2;

// The files' contents, checked: {"fingerprint": F, "strikes": {rung: count}} and
// {"rung": R, "model": M, "fingerprint": F}. For the ledger and its fuzzer.
struct StrikeFile {
  std::string fingerprint;
  std::map<std::string, int> strikes;
};
struct AttemptFile {
  std::string fingerprint, rung, model;
};
Result<StrikeFile> parse_strike_file(const std::string& text);
Result<AttemptFile> parse_attempt_file(const std::string& text);

class AttemptLedger {
 public:
  // Reads the strikes for this fingerprint and turns a left-over attempt file into a strike.
  AttemptLedger(std::filesystem::path cache_dir, std::string fingerprint_hash);

  // A damaged strike or attempt file is ignored (and the strike file rewritten): one line each, naming it.
  const std::vector<std::string>& ignored() const { return ignored_; }

  int strikes(const std::string& rung) const;
  bool refused(const std::string& rung) const { return strikes(rung) >= kStrikesToRefuse; }
  std::string leftover() const { return leftover_; }  // the rung a dead launch was attempting, if any

  Status begin(const std::string& rung, const std::string& model);
  // The attempt returned (success or error): the process survived it.
  void end(const std::string& rung);

 private:
  void save();
  std::filesystem::path dir_;
  std::string fingerprint_;
  std::map<std::string, int> strikes_;
  std::string leftover_;
  std::vector<std::string> ignored_;
};

}  // namespace rung
