// A model's hash that survives what does not change what it computes. An
// exporter writes absolute source paths into doc strings, so moving the
// directory it ran in changes the file's bytes; the stable hash is the SHA-256
// of the model serialised deterministically with every doc_string cleared
// (model, graph, node, attribute, value info, tensor, function, and the same in
// every subgraph of If, Loop and Scan). Anything that runs — a node, an
// attribute, a weight — still changes it.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace onnx {
class ModelProto;
}

namespace rung {

// Clears every doc_string in `model`, subgraphs and functions included.
void clear_doc_strings(onnx::ModelProto& model);

// The stable hash of a parsed model (which it clears in passing).
std::string stable_model_hash(onnx::ModelProto& model);

// The stable hash of a model file: kNotFound when missing, kInvalidArgument when not an ONNX model.
Result<std::string> stable_model_hash_of_file(const std::filesystem::path& file);

}  // namespace rung
