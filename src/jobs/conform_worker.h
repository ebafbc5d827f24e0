// The conform worker: a "conform" job with a channel (jobs/runner.h), one ONNX
// Runtime build and one rung for a whole suite, tests taken one at a time so
// that a test that crashes or hangs the process costs that test alone: the
// parent records it and starts a new job for the rest. Over the channel:
//   worker -> parent  {"ready": true, "version", "rung", "provider"}  (or "ready": false, "stage", "error")
//   parent -> worker  {"test": I, "dir": DIR}                         DIR holds model.onnx and test_data_set_N/
//   worker -> parent  {"done": I, "result": {...}}                    (a ConformCaseResult)
#pragma once

#include <nlohmann/json.hpp>

#include "os/json_form.h"
#include "os/line_channel.h"
#include "jobs/conform_case.h"

namespace rung {

RUNG_JSON_FORM(Tolerance, atol, rtol, nan_equal)
RUNG_JSON_FORM(ConformJob, target, tolerance, profile_dir)
// Outcomes travel by name ("runtime refused").
void to_json(nlohmann::json& j, const ConformCaseResult& r);
void from_json(const nlohmann::json& j, ConformCaseResult& r);  // throws nlohmann::json::exception when malformed

// The worker's entry for "conform" jobs: serves tests until the parent closes
// the channel. Its result is ok unless the rung could not start.
nlohmann::json conform_job_entry(const nlohmann::json& job, LineChannel* channel);

}  // namespace rung
