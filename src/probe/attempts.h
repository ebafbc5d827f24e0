// The two-strikes rule for builds that die, one home for the probe and the
// engine builder. A death says nothing about what was being built (out of
// memory, a kill, a quit), so it is a strike, not a verdict: one strike per
// launch, and two launches in a row refuse the key (a rung for the probe, an
// engine slot for the builder) until the fingerprint changes. Two, not one,
// because quitting during a long compile looks the same as a crash.
//
// In process: before each build, what is being attempted is written to
// `attempt`; it is removed after. A launch that finds the file knows the last
// one died inside that attempt: a strike. In a child: the parent sees the
// worker die and counts the strike itself (strike()).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rung/result.h"

namespace rung {

inline constexpr int kStrikesToRefuse = 2;
// More keys than any ladder, or any application's models on one rung, hold: a file naming more is not rung's.
inline constexpr std::size_t kMaxLedgerKeys = 256;

// What is known of a key's last strike: the launch it happened in, when, and what died.
struct StrikeNote {
  std::string launch, when, what;
};

// The files' contents, checked: {"fingerprint": F, "strikes": {key: count},
// "last": {key: {"launch": L, "when": T, "what": W}}} ("last" optional) and
// {"rung": KEY, "model": M, "fingerprint": F, "launch": L, "when": T} (the last
// two optional). For the ledger and its fuzzer.
struct StrikeFile {
  std::string fingerprint;
  std::map<std::string, int> strikes;
  std::map<std::string, StrikeNote> last;
};
struct AttemptFile {
  std::string fingerprint, rung, model, launch, when;
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
  // The particulars of the key's last strike; null when it has none.
  const StrikeNote* last(const std::string& key) const;

  // `launch` names this start, for the strike the next one may count.
  Status begin(const std::string& rung, const std::string& model, const std::string& launch = {});
  // The attempt returned (success or error): the process survived it.
  void end(const std::string& rung);

  // A death seen from outside (a worker killed by a signal or at its deadline,
  // or gone without its answer) while building `key` in `launch`: one strike
  // per launch, however many deaths that launch sees. Returns the strikes now.
  // A key beyond kMaxLedgerKeys is not recorded (it is then simply tried again).
  int strike(const std::string& key, const std::string& launch, const std::string& what);

 private:
  void save();
  std::filesystem::path dir_;
  std::string fingerprint_;
  std::map<std::string, int> strikes_;
  std::map<std::string, StrikeNote> last_;
  std::string leftover_;
  std::vector<std::string> ignored_;
};

}  // namespace rung
