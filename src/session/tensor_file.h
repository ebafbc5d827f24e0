// Tensors and values on disk as ONNX protobufs (.pb), the form the ONNX test
// suites use: a TensorProto for a tensor, a SequenceProto for a sequence, an
// OptionalProto for an optional value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

// A tensor of more than `max_bytes`, or a file larger than that (plus a little
// for the name and dimensions), is refused before its data is read.
Result<Tensor> read_tensor_file(const std::filesystem::path& path, std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// The same from the file's bytes; `where` names it in errors.
Result<Tensor> parse_tensor_proto(std::string_view bytes, const std::string& where, const std::string& fallback_name,
                                  std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// kAtomic for a file anyone may read at any time; kScratch for a file of a work
// directory whose commit marker is written after it (os/atomic_file.h).
enum class WriteMode { kAtomic, kScratch };
Status write_tensor_file(const Tensor& tensor, const std::filesystem::path& path, WriteMode mode = WriteMode::kAtomic);

// A file's bytes say nothing of which message they hold: `kind` is what the
// model declares for it (a sequence input's file is a SequenceProto).
Result<Value> read_value_file(const std::filesystem::path& path, Value::Kind kind, std::uint64_t max_bytes = kDefaultMaxTensorBytes);
Status write_value_file(const Value& value, const std::filesystem::path& path, WriteMode mode = WriteMode::kAtomic);

// ONNX's test data before 1.14 stores bfloat16 tensors as their uint16 bit
// patterns (NumPy had no bfloat16). Where the model declares bfloat16, a uint16
// tensor read for it (or held in a sequence or optional) is retagged as what it holds.
void adopt_bfloat16(Value& value, ElementType declared);

// Every *.pb in a directory, in name order (input_0.pb, input_1.pb, ...).
Result<std::vector<Tensor>> read_tensor_directory(const std::filesystem::path& dir, std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// Writes `tensors` (or values) into `dir` (created if missing) as output_0.pb, output_1.pb, ...: a worker's
// outputs, in its work directory, as scratch files (its result.json says when they are whole).
Status write_output_directory(const std::vector<Tensor>& tensors, const std::filesystem::path& dir);
Status write_output_directory(const std::vector<Value>& values, const std::filesystem::path& dir);

}  // namespace rung
