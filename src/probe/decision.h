// The probe's decision without its walk: the options checked, the setting found
// (hardware, builds, ladder, probe models), the fingerprint made, and the cache
// read under its lock. What the cache cannot answer is measured by a walk that
// is handed in (probe.cpp), so a program that only answers from the cache (the
// `rung` front, cli/front.cpp) links no measuring and no ONNX protobuf code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/probe.h"
#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

// Everything one probe works with, found before anything is measured.
struct ProbeSetting {
  ProbeOptions o;  // the caller's, with the threads resolved for this hardware
  Hardware hw;
  RuntimeDiscovery discovery;
  const RuntimeBuild* build = nullptr;
  std::vector<RungSpec> ladder;
  std::vector<const RegisteredModel*> probe_models;
  // Without named probe models: the other models by size, each probed in turn only
  // when the floor could run none before it (a bad spec on the smallest must not
  // keep every model off the accelerators).
  std::vector<const RegisteredModel*> spare_probe_models;
  bool can_cache = false;
  // The builds found (probe/launch.h): their record, what came of opening them
  // ("" when warm), and whether only the one the cache named was opened.
  std::string builds_found;
  std::string builds_seen;
  bool warm = false;
};

// A line the probe noticed: to the log callback and into the outcome's log.
void note(const ProbeOptions& o, ProbeOutcome& out, std::string line);

// Measures the floor and the ladder above it into `out`, under `fingerprint`.
using ProbeWalk = Status (*)(const ProbeSetting& setting, const std::string& fingerprint, ProbeOutcome& out);

// The decision: the cache's when it holds, else what `walk` measured (then cached).
// With no walk, nullopt where one would be needed (no cache, a changed
// fingerprint, a re-probe asked for); the cache is then left as it was.
Result<std::optional<ProbeOutcome>> decide_probe(const ProbeOptions& options, ProbeWalk walk);

}  // namespace rung
