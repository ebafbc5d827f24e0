// How each rung of a ladder stands in a given runtime build, before any probe:
// is the provider in the build, and are the files it loads beside it?
#pragma once

#include <string>
#include <vector>

#include "rung/ladder.h"
#include "rung/runtime.h"

namespace rung {

struct ProviderFile {
  std::string name;
  bool present = false;
};

struct RungStanding {
  RungSpec rung;
  bool provider_in_build = false;
  std::vector<ProviderFile> files;   // rung.provider_libraries, looked up beside the build
  bool ready = false;                // provider present and every file present
  std::string note;                  // "ready to probe", "not in ONNX Runtime 1.29.0", "libonnxruntime_providers_cuda.so not found"
};

std::vector<RungStanding> ladder_standing(const Ladder& ladder, const RuntimeBuild& build);

// One line for an about screen: "CPU · ONNX Runtime 1.30.0 · 3 builds found".
std::string about_line(const std::string& rung_display, const RuntimeDiscovery& discovery);

}  // namespace rung
