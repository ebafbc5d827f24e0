// What `rung bench` records about a model file before running it: that it
// exists and parses as ONNX, its SHA-256, and the numeric form its graph holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "rung/model.h"
#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

struct ModelFileFacts {
  std::uintmax_t size_bytes = 0;
  std::string sha256;
  NumericForm form = NumericForm::kF32;
  std::string form_evidence;   // "412 f32 initializers", "86 QDQ pairs, 16-bit activations, 8-bit weights"
  std::int64_t opset = 0;      // of the default domain
  int nodes = 0;
};

// Parses an ONNX model file: kNotFound when missing, kInvalidArgument when it is not an ONNX model.
Status read_onnx_model(const std::filesystem::path& file, onnx::ModelProto& model);

// kNotFound when the file is missing, kInvalidArgument when it is not an ONNX model.
Result<ModelFileFacts> inspect_model_file(const std::filesystem::path& file);

}  // namespace rung
