// The one place that names OrtApi entries directly. Everything else uses the
// C++ wrappers over the table installed here, or these functions, which check
// the table's API version before calling anything newer than it.
#pragma once

#include <string>
#include <vector>

#include "rung/result.h"

struct OrtApi;
struct OrtApiBase;

namespace rung::ort {

struct BuildInfo {
  std::string version;
  int api_version = 0;
  const OrtApi* api = nullptr;
  std::vector<std::string> providers;
};

// Asks a build for the highest API version both sides support (a build answers
// null for versions above its own; a naive GetApi(ORT_API_VERSION) on an older
// build is a null table), then lists its providers.
Result<BuildInfo> query_build(const OrtApiBase* base, int newest, int oldest);

// Makes `api` the table the C++ wrappers use in this process. Once per process:
// a second call with another table is an error.
Status install_api(const OrtApi* api, int api_version);
const OrtApi* installed_api();
int installed_api_version();

// The first API version whose run options profile one run (RunOptionsEnableProfiling, ONNX Runtime 1.25).
inline constexpr int kRunProfilingApiVersion = 25;

}  // namespace rung::ort
