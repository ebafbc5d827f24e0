#include "quantise/cpu_session.h"

#include <fmt/format.h>

#include "graph/model_write.h"
#include "quantise/calibration.h"
#include "rung/ladder.h"

namespace rung {

SessionSettings cpu_session_settings(int threads) {
  SessionSettings settings;
  settings.rung = cpu_floor_rung();
  settings.intra_op_threads = threads;
  return settings;
}

Result<PreparedSession> open_exposed_on_cpu(OrtProcess& process, const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                                            const std::filesystem::path& file, int threads) {
  RUNG_RETURN_IF_ERROR(write_onnx_model(exposing(model, tensors), file));
  auto session = open_session(process, file, cpu_session_settings(threads));
  if (!session) return Error{session.error().code, fmt::format("{}: {}", file.filename().string(), session.error().message)};
  return prepare_session(std::move(*session));
}

}  // namespace rung
