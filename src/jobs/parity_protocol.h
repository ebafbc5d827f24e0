// The parity worker protocol. The parent writes a job file per side and starts
// `rung-probe-worker parity JOB.json` with a socket on the descriptor the job
// names. Over it, one JSON object a line:
//   worker -> parent  {"ready": true, "version", "api", "rung", "io"}  (or "ready": false, "stage", "error")
//   parent -> worker  {"run": I, "inputs": DIR}   DIR holds input_K.pb for each model input K, in model order
//   worker -> parent  {"done": I, "ms": T}        outputs written to OUTPUTS_DIR/I/output_K.pb (or "error")
// The parent closes the socket when done; the worker then exits. Outputs go
// through files, so a side's memory holds one input's tensors at a time, and
// the parent deletes each input's files once both sides' have been compared.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "rung/result.h"
#include "session/model_io.h"

namespace rung {

struct ParityJob {
  std::filesystem::path runtime_library;
  bool allow_writable_runtime = false;
  std::filesystem::path model;
  std::string rung = "cpu";  // "cpu", a ladder rung's name, or a plugin EP library path
  int threads = 0;
  std::map<std::string, std::string> provider_options;
  std::filesystem::path outputs_dir;
  int channel_fd = 3;
};

std::string parity_job_to_json(const ParityJob& job);
Result<ParityJob> parity_job_from_json(const std::string& text);

nlohmann::json model_io_to_json(const ModelIo& io);
ModelIo model_io_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception on a malformed object

inline constexpr int kParityChannelFd = 3;

}  // namespace rung
