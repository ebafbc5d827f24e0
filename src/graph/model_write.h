// Writing an ONNX model that rung made (an upgraded graph, a quantised form):
// serialised whole, then put in place atomically, so no reader sees half a file.
#pragma once

#include <filesystem>

#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

Status write_onnx_model(const onnx::ModelProto& model, const std::filesystem::path& path);

}  // namespace rung
