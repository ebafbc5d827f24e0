// Where ONNX Runtime builds are looked for, in order.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

struct RuntimeCandidate {
  std::filesystem::path library;
  SearchOrigin origin;
};

struct RuntimeSearch {
  std::vector<SearchedDirectory> searched;
  std::vector<RuntimeCandidate> candidates;  // search order, duplicates removed
};

// The library file in `dir` ("libonnxruntime.so" preferred over "libonnxruntime.so.1[.x.y]").
std::optional<std::filesystem::path> library_in(const std::filesystem::path& dir);

// Lists candidates. Errors only for a directory the caller (kInvalidArgument)
// or RUNG_ORT_DIR (kNoRuntime) named that cannot be used (relative, missing,
// empty, holding no build).
Result<RuntimeSearch> search_runtimes(const RuntimeSearchOptions& options);

}  // namespace rung
