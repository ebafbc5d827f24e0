// The gate file: per model, how its inputs are made and which decision gates
// it must pass. Read and checked before any model is loaded.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parity/gates/gate.h"
#include "rung/image.h"
#include "rung/input_spec.h"

namespace rung {

struct GateFile {
  std::optional<ImagePreprocess> preprocess;  // how image inputs become tensors
  std::string image_input;                    // the model input images feed ("" = the only image-shaped one)
  InputSpec inputs;                           // dims and values for inputs the input directory does not give
  std::vector<std::unique_ptr<ParityGate>> gates;
};

// {
//   "model": "PP-OCRv4 detector",                       (optional, for people)
//   "preprocess": {"fit": "limit", "max_side": 960, "multiple": 32, ...},
//   "inputs": {"dims": {...}, "values": {...}},
//   "gates": [{"decoder": "boxes", "output": "...", ...}, ...]
// }
Result<GateFile> read_gate_file(const std::filesystem::path& path);
// The files its gates read besides it (character lists).
std::vector<std::filesystem::path> files_named_by(const GateFile& gates);
Result<GateFile> parse_gate_file(const std::string& text, const std::filesystem::path& base_dir, const std::string& where);

// The gate when none is given: the tensor gate on every output.
std::unique_ptr<ParityGate> default_tensor_gate();
Result<ImagePreprocess> read_preprocess_file(const std::filesystem::path& path, std::string* image_input);

}  // namespace rung
