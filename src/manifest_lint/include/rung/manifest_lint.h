// The lint of a variant manifest (`rung variants lint`): each variant's file, its
// hash and form, the floor, the pins and their evidence in the release registry,
// what a deployment would silently fall back from. A release tool, above the
// registry; the manifest itself and its resolution are the engine's (variants.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/result.h"
#include "rung/variants.h"

namespace rung::variants {

// --- The lint: every finding names the group, the variant or platform, and what is wrong. ---

// The kinds of finding, one word each, as `rung variants lint` prints them.
enum class FindingKind {
  kFile,           // a variant's file is missing, or its hash or form is not what the manifest says
  kNoFloor,        // a group has no f32 variant on the CPU, the floor every device has
  kUnpinned,       // two accelerated variants are offered on one platform and no pin decides
  kPin,            // a pin gives no reason, or a reason without a measurement
  kUnreachable,    // no platform can ever resolve to the variant
  kUnprovisioned,  // DEFAULT would be a rung the deployment does not provision: a silent fallback
  kEvidence,       // an accelerated DEFAULT without registry evidence that it beat the CPU and passed its gates
  kUnnamed,        // (--scan) a model file no variant names
};
const char* finding_kind_name(FindingKind k);  // "file", "no-floor", "unpinned", "pin", ...

struct Finding {
  FindingKind kind;
  std::string subject;  // "ppocr_det_v4/tensorrt_f16", "ppocr_det_v4 on nvidia", a file
  std::string message;
};

struct LintOptions {
  bool check_files = true;
  std::string registry_url;  // opened only when an accelerated variant is DEFAULT somewhere
};

// Findings of the manifest against the deployment, over every platform rung
// knows (each with every rung of its ladder, plus the deployment's plugin rungs).
// An Error only when the registry is needed and cannot be opened.
Result<std::vector<Finding>> lint(const Manifest& manifest, const Deployment& deployment, const LintOptions& options);

// Model files (.onnx, .ort) under `dir` that no variant names (by path); kNotFound when `dir` is not a directory.
Result<std::vector<Finding>> scan(const Manifest& manifest, const std::filesystem::path& dir);

}  // namespace rung::variants
