// One ONNX backend test run on one rung, in a conform worker: the test's folder
// holds model.onnx and test_data_set_N/ with input_K.pb and output_K.pb (tensors,
// sequences or optional values, as the model declares them). The session is
// built on the rung with ONNX Runtime's profiler on, every data set is run and
// compared with its expected outputs, and the profile says which provider ran
// which nodes.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "jobs/target.h"
#include "rung/tolerance.h"

namespace rung {

class OrtProcess;  // session/session.h: kept out of this header, which the worker's main includes

// What became of a test on a rung. kCannotFeed is rung's own failure (a value it
// cannot read, build or hold); kRuntimeRefused is ONNX Runtime's, with its reason.
enum class ConformOutcome { kPass, kMismatch, kNotPlaced, kRuntimeRefused, kCannotFeed, kTimedOut, kCrashed, kSkipped };
inline constexpr ConformOutcome kConformOutcomes[] = {ConformOutcome::kPass,           ConformOutcome::kMismatch,
                                                     ConformOutcome::kNotPlaced,      ConformOutcome::kRuntimeRefused,
                                                     ConformOutcome::kCannotFeed,     ConformOutcome::kTimedOut,
                                                     ConformOutcome::kCrashed,        ConformOutcome::kSkipped};
// "pass", "mismatch", "not placed", "runtime refused", "rung cannot feed it", "timed out", "crashed", "skipped"
const char* conform_outcome_name(ConformOutcome outcome);
ConformOutcome conform_outcome_from_name(const std::string& name);  // kSkipped for an unknown name

struct ConformCaseResult {
  ConformOutcome outcome = ConformOutcome::kPass;
  std::string reason;        // ONNX Runtime's reason, rung's, the first mismatch, or where the nodes ran
  double max_abs = 0;        // the largest error over every output and data set
  double max_rel = 0;
  int data_sets = 0;
  double ms = 0;             // session build and every run
  std::vector<std::pair<std::string, int>> nodes_by_provider;  // from ONNX Runtime's profile
};

// What a conform job runs each test with. The target's model is unused: each
// test brings its own.
struct ConformJob {
  JobTarget target;
  Tolerance tolerance = Tolerance::onnx_backend();
  std::filesystem::path profile_dir;  // ONNX Runtime's profiles, read and removed test by test
};

// `job`'s rung is completed on the loaded build (jobs/worker_rung.h). Never throws.
ConformCaseResult run_conform_case(OrtProcess& process, const ConformJob& job, const std::filesystem::path& test_dir);

}  // namespace rung
