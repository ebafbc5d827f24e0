// NumPy .npy arrays (format 1.0-3.0, C order, little-endian) as tensors, both ways.
#pragma once

#include <filesystem>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

// The tensor is named after the file's stem. Fixed-width byte and Unicode
// strings ("|S7", "<U7") are string tensors.
Result<Tensor> read_npy_file(const std::filesystem::path& path);
// Strings are written as fixed-width bytes; bfloat16 and the float8 formats,
// which NumPy has no dtype for, are refused (write them as .pb).
Status write_npy_file(const Tensor& tensor, const std::filesystem::path& path);

}  // namespace rung
