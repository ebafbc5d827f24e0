// Where ONNX Runtime builds are looked for, in order.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "rung/hardware.h"
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

// discover_runtimes on a search already made: loads its candidates, scores them
// and chooses. With `only`, just that candidate is opened (its ELF read, dlopen'ed,
// asked for its table); every other one is listed unopened, `why_not_opened`
// its skipped_reason. The caller answers for that being the build a full
// discovery would choose (probe/launch.h: the probe cache's record of the builds).
// With `recorded` too, `only` is not opened either: it is taken as the record
// keeps what opening it gave (loaded, its api null), scored as recorded.
Result<RuntimeDiscovery> discover_found_runtimes(const RuntimeSearch& search, const RuntimeSearchOptions& options, const Hardware& hardware,
                                                 std::optional<std::size_t> only = std::nullopt, const std::string& why_not_opened = {},
                                                 const RuntimeBuild* recorded = nullptr);

}  // namespace rung
