// What `rung bench` and the registry record about a model file: that it
// exists and parses as ONNX, its SHA-256 (raw and stable), the numeric form its
// graph holds and what its weights are stored as.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rung/model.h"
#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

// Initializers (and Constant nodes' tensors) of one element type.
struct TensorCount {
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
};

struct ModelFileFacts {
  std::uintmax_t size_bytes = 0;
  std::string sha256;
  std::string stable_sha256;   // without doc strings: graph/stable_hash.h
  NumericForm form = NumericForm::kF32;
  std::string form_evidence;   // "412 f32 initializers", "86 QDQ pairs, 16-bit activations, 8-bit weights"
  std::int64_t opset = 0;      // of the default domain
  int nodes = 0;
  std::map<std::string, TensorCount> weights_by_type;  // "float32", "int8", ...: subgraphs included
  int ep_context_nodes = 0;    // EPContext nodes: a compiled engine whose weights live in a provider's blob
};

// kNotFound when the file is missing, kInvalidArgument when it is not an ONNX model.
Result<ModelFileFacts> inspect_model_file(const std::filesystem::path& file);
// The same facts of a model already read from `file`, for a caller that goes on
// to use the graph: the file is parsed once (its bytes are still hashed from it).
Result<ModelFileFacts> inspect_model(const onnx::ModelProto& model, const std::filesystem::path& file);

// The operator types of the main graph's nodes, in node order, repeats kept;
// "domain.Op" outside the default domain. An error when the file does not parse.
Result<std::vector<std::string>> graph_op_types(const std::filesystem::path& file);

}  // namespace rung
