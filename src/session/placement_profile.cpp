// The profiled run behind NodePlacement: apart from placement.cpp so that what
// reads placements (cache and job files, fuzzed alone) needs no session.
#include <algorithm>
#include <system_error>

#include "runtime/clean_error.h"
#include "session/placement.h"
#include "session/session.h"
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

}  // namespace rung
