// The parity worker protocol. The parent starts one "parity" job per side with
// a channel (jobs/runner.h). Over it, one JSON object a line:
//   worker -> parent  {"ready": true, "version", "api", "rung", "io"}  (or "ready": false, "stage", "error")
//   parent -> worker  {"run": I, "inputs": DIR}   DIR holds input_K.pb for each model input K, in model order
//                                                 (a TensorProto, SequenceProto or OptionalProto, as the model declares it)
//   worker -> parent  {"done": I, "ms": T}        outputs written to OUTPUTS_DIR/I/output_K.pb (or "error")
//   parent -> worker  {"placement": DIR}          one profiled run of DIR's inputs
//   worker -> parent  {"placement": {...}}        session/placement.h's JSON (or null and "error")
// The parent closes the socket when done; the worker then exits. Outputs go
// through files, so a side's memory holds one input's tensors at a time, and
// the parent deletes each input's files once both sides' have been compared.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "os/json_form.h"
#include "jobs/target.h"
#include "session/model_io.h"

namespace rung {

// The side's target names its rung as the command line did: by name ("cpu", a
// ladder rung's name) in rung.name, or a plugin EP library in rung.plugin_library;
// the worker completes it once the build is loaded.
struct ParityJob {
  JobTarget target;
  std::filesystem::path outputs_dir;
};

RUNG_JSON_FORM(ParityJob, target, outputs_dir)
// A description travels with its types by name ("float32", "string"), never by
// enum number, and with what wraps each tensor (a sequence, an optional value).
void to_json(nlohmann::json& j, const TensorInfo& t);
void from_json(const nlohmann::json& j, TensorInfo& t);  // throws nlohmann::json::exception when malformed
RUNG_JSON_FORM(ModelIo, inputs, outputs)

}  // namespace rung
