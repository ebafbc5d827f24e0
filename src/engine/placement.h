// Where one model runs and in which form, for a job: the rung decides which form
// loads, the role can veto it, and an engine that has not landed sends the model
// to the rung below.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rung/ladder.h"
#include "rung/model.h"

namespace rung {

// What a job was pinned to when it began.
struct PlacementSnapshot {
  RungSpec chosen;                         // the probe's rung (the floor until it reports)
  std::vector<RungSpec> below;             // working rungs under it, best first; the CPU last
  std::map<std::string, std::filesystem::path> engines;      // model -> landed engine of the chosen rung
  std::map<std::string, std::string> engine_failures;        // model -> why its engine failed
  std::map<std::string, std::string> engine_rewrites;        // model -> what the rewrite its engine was built from changed
  std::map<std::string, std::string> engine_replaced;        // model -> why the cached engine was rebuilt (not this model's)
  std::map<std::string, std::filesystem::path> cpu_forms;    // model -> the CPU rung's optimised graph
};

struct Placement {
  RungSpec rung;
  NumericForm form = NumericForm::kF32;
  std::filesystem::path file;   // what the session loads: the f32 file, a derived form, an engine
  bool fp16 = false;            // the provider builds an fp16 engine from the f32 file
  std::string reason;
};

// Best placement first, then each fallback down to the CPU's f32 file.
std::vector<Placement> placements(const ModelRegistration& model, const PlacementSnapshot& snapshot);

}  // namespace rung
