// The sessions rung quantise runs itself, all on ONNX Runtime's CPU rung:
// calibration, the error ranking of --search, and the form's timing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/result.h"
#include "session/session.h"

namespace onnx {
class ModelProto;
}

namespace rung {

// The CPU rung with `threads` intra-op threads (0: ONNX Runtime's default).
SessionSettings cpu_session_settings(int threads);

// `model` with `tensors` exposed as outputs, written to `file` and opened on the CPU.
Result<PreparedSession> open_exposed_on_cpu(OrtProcess& process, const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                                            const std::filesystem::path& file, int threads);

}  // namespace rung
