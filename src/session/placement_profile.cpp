// The profiled run behind NodePlacement: apart from placement.cpp so that what
// reads placements (cache and job files, fuzzed alone) needs no session.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <system_error>
#include <vector>

#include "runtime/clean_error.h"
#include "session/placement.h"
#include "session/session.h"
#include "rung/directory.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;

Result<NodePlacement> profile_placement(OrtProcess& process, const fs::path& model, const SessionSettings& timed,
                                        const std::vector<Tensor>& inputs, const fs::path& dir, int runs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  SessionSettings settings = timed;
  settings.profile_prefix = dir / "run";
  auto session = open_session(process, model, settings);
  if (!session) return Error{ErrorCode::kRuntime, "no placement profile: " + clean_error(session.error().message)};
  Result<std::vector<Tensor>> ran = std::vector<Tensor>{};
  for (int r = 0; r < std::max(runs, 1) && ran; ++r) ran = run_session(*session, inputs);
  try {
    Ort::AllocatorWithDefaultOptions alloc;
    const fs::path written = path_from_utf8(session->EndProfilingAllocated(alloc).get());
    if (!ran) return Error{ErrorCode::kRuntime, "no placement profile: the profiled run failed: " + clean_error(ran.error().message)};
    NodePlacement p = read_profile_placement(written);
    for (auto& share : p.providers) share.kernel_us /= std::max(runs, 1);
    for (auto& op : p.ops) op.kernel_us /= std::max(runs, 1);
    fs::remove(written, ec);
    return p;
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, std::string("no placement profile: ") + e.what()};
  }
}

Result<NodePlacement> profile_placement(OrtProcess& process, PreparedSession& built, const fs::path& model,
                                        const SessionSettings& settings, const std::vector<Tensor>& inputs, const fs::path& dir,
                                        int runs) {
  if (!runs_profile_alone()) return profile_placement(process, model, settings, inputs, dir, runs);
  std::error_code ec;
  fs::create_directories(dir, ec);
  runs = std::max(runs, 1);
  // Each run writes <prefix>_<time>.json, its prefix "alone<run>": only those files are read.
  const std::string stem = "alone";
  auto profiles = [&] {
    std::vector<fs::path> found;
    if (auto entries = list_directory(dir)) {
      for (const auto& e : *entries) {
        if (e.filename().string().rfind(stem, 0) == 0 && e.extension() == ".json") found.push_back(e);
      }
    }
    return found;
  };
  for (const auto& stale : profiles()) fs::remove(stale, ec);  // a retried job's earlier profiles are not this run's
  Result<std::vector<Tensor>> ran = std::vector<Tensor>{};
  for (int r = 0; r < runs && ran; ++r) ran = run_session_profiled(built, inputs, dir / path_from_utf8(fmt::format("{}{}", stem, r)));
  const std::vector<fs::path> written = profiles();
  auto remove_written = [&] {
    for (const auto& f : written) fs::remove(f, ec);
  };
  if (!ran) {
    remove_written();
    return Error{ErrorCode::kRuntime, "no placement profile: the profiled run failed: " + clean_error(ran.error().message)};
  }
  NodePlacement p = read_profile_placement(written);
  remove_written();
  for (auto& share : p.providers) share.kernel_us /= runs;
  for (auto& op : p.ops) op.kernel_us /= runs;
  return p;
}

}  // namespace rung
