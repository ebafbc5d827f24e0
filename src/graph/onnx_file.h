// Reading an ONNX model file into libonnx's ModelProto, with the checks every
// reader in graph/ needs: the file exists, and it parses as a model with a graph.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>

#include "rung/result.h"

namespace rung {

// kNotFound when the file is missing, kIo when it cannot be read, kInvalidArgument when it is not an ONNX model.
Result<onnx::ModelProto> read_onnx_model(const std::filesystem::path& file);

}  // namespace rung
