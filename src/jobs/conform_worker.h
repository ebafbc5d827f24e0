// The conform worker (`rung-probe-worker conform JOB.json`): one ONNX Runtime
// build and one rung for a whole suite, tests taken one at a time over a socket
// (jobs/channel.h) so that a test that crashes or hangs the process costs that
// test alone: the parent records it and starts a new worker for the rest.
//   worker -> parent  {"ready": true, "version", "rung", "provider"}  (or "ready": false, "stage", "error")
//   parent -> worker  {"test": I, "dir": DIR}                         DIR holds model.onnx and test_data_set_N/
//   worker -> parent  {"done": I, "result": {...}}                    (conform_result_to_json)
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "jobs/conform_case.h"
#include "rung/result.h"

namespace rung {

struct ConformJob {
  std::filesystem::path runtime_library;
  bool allow_writable_runtime = false;
  std::string rung = "cpu";  // "cpu", a ladder rung's name, or a plugin EP library path
  int threads = 1;
  std::map<std::string, std::string> provider_options;
  Tolerance tolerance = Tolerance::onnx_backend();
  std::filesystem::path work_dir;  // profiles
  int channel_fd = 3;
};

std::string conform_job_to_json(const ConformJob& job);
Result<ConformJob> conform_job_from_json(const std::string& text);

nlohmann::json conform_result_to_json(const ConformCaseResult& r);
ConformCaseResult conform_result_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception when malformed

// argv[1] is the job file. 0 after the parent closed the socket; 2 on a malformed job; 1 when the rung could not start.
int conform_worker_main(int argc, char** argv);

}  // namespace rung
