// Tensors on disk as ONNX TensorProto (.pb), the form the ONNX test suites use.
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
Status write_tensor_file(const Tensor& tensor, const std::filesystem::path& path);

// Every *.pb in a directory, in name order (input_0.pb, input_1.pb, ...).
Result<std::vector<Tensor>> read_tensor_directory(const std::filesystem::path& dir, std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// Writes `tensors` into `dir` (created if missing) as output_0.pb, output_1.pb, ...
Status write_output_directory(const std::vector<Tensor>& tensors, const std::filesystem::path& dir);

}  // namespace rung
