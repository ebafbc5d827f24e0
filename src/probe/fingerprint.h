// Everything a probe decision depends on. The cache is trusted only while the
// fingerprint is unchanged: a driver update, a runtime update or a new model
// file each invalidates it by construction.
#pragma once

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

}  // namespace rung
