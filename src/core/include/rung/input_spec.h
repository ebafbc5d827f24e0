// What a model is fed when rung runs it without the application: sizes for its
// dynamic dimensions, constant values for inputs that only accept certain
// values (Silero VAD's `sr`), or a directory of recorded tensors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

// Without a spec: the first axis, and a dimension named like a batch ("batch",
// "N", "batch_size") anywhere, is 1; every other dynamic dimension is 64. Values
// are seeded random: floats uniform in [0, 1), integers uniform in [0, 4).
inline constexpr std::int64_t kDefaultBatch = 1;
inline constexpr std::int64_t kDefaultDynamicDim = 64;

struct InputSpec {
  // Symbolic dimension name ("height") or "input:axis" ("x:2") -> size.
  std::map<std::string, std::int64_t> dims;
  // Input name -> values; one value fills the whole tensor.
  std::map<std::string, std::vector<double>> values;
  // Recorded tensors (ONNX TensorProto .pb files named after the inputs, or input_N.pb in input order).
  std::filesystem::path tensors_dir;
  // The largest tensor made or read for the model: a shape asking for more is
  // refused, naming the input and its size, before anything is allocated.
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;

  bool empty() const { return dims.empty() && values.empty() && tensors_dir.empty(); }
  // A stable text form: it is part of the probe's fingerprint.
  std::string canonical() const;

  // {"dims": {"height": 640, "x:3": 640}, "values": {"sr": [16000]}, "tensors": "dir", "max_tensor_mb": 2048}
  // A relative "tensors" directory is relative to the spec file. A dimension is
  // a positive whole number; a key "input:axis" names the axis by its number.
  // Whether the names exist in the model is checked when the spec meets it
  // (check_input_spec in session/inputs.h).
  static Result<InputSpec> from_json_file(const std::filesystem::path& file);
  static Result<InputSpec> from_json_text(const std::string& text, const std::filesystem::path& base_dir = {});
};

// --shape INPUT=1x3x640x640: one input's whole shape, its values generated as
// without it (seeded random, or zeros). Parsed here so every command reads it alike.
struct InputShape {
  std::string input;
  std::vector<std::int64_t> dims;
  std::string text;                 // as given, for messages
};

// "NAME=D1xD2x..." with every D a positive whole number (at most 2^31 - 1);
// kInvalidArgument naming the text and the reason otherwise.
Result<InputShape> parse_input_shape(const std::string& text);

// An input as the model file declares it.
struct DeclaredInput {
  std::string name;
  std::vector<std::int64_t> shape;  // -1 where dynamic
  std::size_t element_bytes = 4;
};

// Sets `spec`'s dims for the shape's dynamic axes ("x:2" = 640) after checking it
// against the model's inputs: kInvalidArgument naming the input when the model
// has no such input, the rank differs, a fixed axis is another size, or the
// tensor would exceed spec.max_tensor_bytes.
Status apply_input_shape(InputSpec& spec, const InputShape& shape, const std::vector<DeclaredInput>& inputs);

}  // namespace rung
