// Everything a probe decision depends on. The cache is trusted only while the
// fingerprint is unchanged: a driver update, a runtime update or a new model
// file each invalidates it by construction.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "os/file_hash.h"
#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/probe.h"
#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

struct FingerprintInputs {
  const RuntimeBuild* build = nullptr;
  const Hardware* hardware = nullptr;
  const std::vector<RungSpec>* ladder = nullptr;
  const ProbeOptions* options = nullptr;
  std::vector<std::string> probe_models;
};

// The fingerprint as canonical JSON text; equal text means nothing changed.
Result<std::string> make_fingerprint(const FingerprintInputs& in, FileHashCache& hashes);

// What differs between the fingerprint a decision was made under (`was`, as a
// cache file holds it) and this one, one phrase per change, as a person reads
// it: "the runtime: version 1.29.0 → 1.30.0", "model det: its file",
// "model vad: new", "the settings: threads 0 → 1". Never empty when the two
// differ ("the fingerprint's form" for one this rung did not write).
std::vector<std::string> fingerprint_changes(const nlohmann::json& was, const nlohmann::json& now);

}  // namespace rung
