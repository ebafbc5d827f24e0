// Tensors on disk as ONNX TensorProto (.pb), the form the ONNX test suites use.
#pragma once

#include <filesystem>
#include <vector>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

Result<Tensor> read_tensor_file(const std::filesystem::path& path);
Status write_tensor_file(const Tensor& tensor, const std::filesystem::path& path);

// Every *.pb in a directory, in name order (input_0.pb, input_1.pb, ...).
Result<std::vector<Tensor>> read_tensor_directory(const std::filesystem::path& dir);
// Writes `tensors` into `dir` (created if missing) as output_0.pb, output_1.pb, ...
Status write_output_directory(const std::vector<Tensor>& tensors, const std::filesystem::path& dir);

}  // namespace rung
