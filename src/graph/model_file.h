// What `rung bench` records about a model file before running it: that it
// exists and parses as ONNX, its SHA-256, and the numeric form its graph holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "rung/model.h"
#include "rung/result.h"

namespace rung {

struct ModelFileFacts {
  std::uintmax_t size_bytes = 0;
  std::string sha256;
  NumericForm form = NumericForm::kF32;
  std::string form_evidence;   // "412 f32 initializers", "86 QDQ pairs, 16-bit activations, 8-bit weights"
  std::int64_t opset = 0;      // of the default domain
  int nodes = 0;
};

// kNotFound when the file is missing, kInvalidArgument when it is not an ONNX model.
Result<ModelFileFacts> inspect_model_file(const std::filesystem::path& file);

// The operator types of the main graph's nodes, in node order, repeats kept;
// "domain.Op" outside the default domain. An error when the file does not parse.
Result<std::vector<std::string>> graph_op_types(const std::filesystem::path& file);

}  // namespace rung
