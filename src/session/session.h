// The runtime build this process runs, and sessions on it. One build per
// process: its OrtApi table is installed for the C++ wrappers, and one Env lives
// as long as the process.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onnxruntime_cxx_api.h"
#include "rung/ladder.h"
#include "rung/result.h"
#include "rung/runtime.h"
#include "rung/tensor.h"
#include "session/model_io.h"
#include "rungs/provider_settings.h"

namespace rung {

struct SessionSettings {
  RungSpec rung;
  int intra_op_threads = 0;  // 0: ONNX Runtime's default
  ProviderSettings provider;
  std::filesystem::path optimized_model_path;  // save the optimised graph here (the CPU rung's derived form)
  std::filesystem::path profile_prefix;        // profile every node run to <prefix>_<date>.json (bench's placement evidence)
};

class OrtProcess {
 public:
  // Installs `build` for this process. The first build installed stays; asking
  // for another is an error naming both.
  static Result<OrtProcess*> install(const RuntimeBuild& build);
  static OrtProcess* current();

  Ort::Env& env() { return env_; }
  const RuntimeBuild& build() const { return build_; }

  // Appends a plugin EP rung: registers its library once (needs API 22+), then
  // appends every EP device the library added.
  Status append_plugin(Ort::SessionOptions& options, const RungSpec& rung, const std::map<std::string, std::string>& o);
  // EP names a plugin library brings (registering it if needed).
  Result<std::vector<std::string>> plugin_ep_names(const std::filesystem::path& library);

 private:
  explicit OrtProcess(RuntimeBuild build);
  Result<std::vector<std::string>> register_plugin_locked(const std::filesystem::path& library);

  RuntimeBuild build_;
  Ort::Env env_;
  std::mutex mutex_;
  std::map<std::string, std::vector<std::string>> plugins_;  // registration name (file stem) -> EP names it added
};

// Attaches the rung's provider to session options. The CPU rung attaches nothing.
Status append_provider(Ort::SessionOptions& options, OrtProcess& process, const RungSpec& rung,
                       const ProviderSettings& settings);

Result<Ort::Session> open_session(OrtProcess& process, const std::filesystem::path& model, const SessionSettings& settings);
ModelIo describe_session(const Ort::Session& session);
ONNXTensorElementDataType ort_element_type(ElementType type);
// An ONNX Runtime value over a tensor's bytes (no copy: the tensor must outlive
// it), or with its strings copied in. Throws Ort::Exception.
Ort::Value tensor_value(const Tensor& tensor);
// Describes the session on every call (names and type infos are allocated each
// time); for a loop, prepare the session once instead. Every output must be a tensor.
Result<std::vector<Tensor>> run_session(Ort::Session& session, const std::vector<Tensor>& inputs);

// A session with its inputs and outputs described once: a run then looks up no
// names (describe_session costs microseconds per call; see bench/run-overhead-bench.cc).
struct PreparedSession {
  Ort::Session session;
  ModelIo io;
};
Result<PreparedSession> prepare_session(Ort::Session session);
// `run_config`: per-run provider settings (see run_option_map).
Result<std::vector<Tensor>> run_session(PreparedSession& prepared, const std::vector<Tensor>& inputs,
                                        const std::map<std::string, std::string>& run_config = {});
// Whether the ONNX Runtime installed in this process profiles a single run
// through its run options (API 25, ONNX Runtime 1.25 and later).
bool runs_profile_alone();
// run_session with ONNX Runtime profiling this run alone, into a file named
// `prefix`_<time>.json; an error where runs_profile_alone() is false.
Result<std::vector<Tensor>> run_session_profiled(PreparedSession& prepared, const std::vector<Tensor>& inputs,
                                                 const std::filesystem::path& prefix);
// The same over inputs that lend their elements: fed in place, never copied.
Result<std::vector<Tensor>> run_session_views(PreparedSession& prepared, const std::vector<InputView>& inputs,
                                              const std::map<std::string, std::string>& run_config = {});
// Any value the model takes and gives: tensors, sequences, optional values. An
// optional input that is None is left out of the feeds (ONNX Runtime reads an
// absent optional input as None). Outputs come back in the model's order.
Result<std::vector<Value>> run_session_values(PreparedSession& prepared, const std::vector<Value>& inputs);

// Errors from building the input values (ONNX Runtime refusing a value, such as
// an empty sequence) are kRuntime with ONNX Runtime's message; values rung
// cannot express are kUnsupported.

// An output where ONNX Runtime left it: valid only inside the visit.
struct TensorView {
  std::string_view name;
  ElementType type = ElementType::kFloat;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> bytes;
};
// Runs and hands the outputs to `visit` without copying them (calibration
// reads every activation of a model once: a copy would double its memory).
// Returns what the visit returns.
Status run_session_visiting(PreparedSession& prepared, const std::vector<Tensor>& inputs,
                            const std::function<Status(const std::vector<TensorView>&)>& visit);

}  // namespace rung
