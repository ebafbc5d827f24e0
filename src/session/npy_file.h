// NumPy .npy arrays (format 1.0-3.0, C order, little-endian) as tensors, both ways.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

// The tensor is named after the file's stem. Fixed-width byte and Unicode
// strings ("|S7", "<U7") are string tensors. The header is read first: a shape
// of more than `max_bytes`, or one the file's size does not match, is refused
// before the data is read.
Result<Tensor> read_npy_file(const std::filesystem::path& path, std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// The same from the file's bytes; `where` names it in errors.
Result<Tensor> parse_npy(std::string_view bytes, const std::string& where, const std::string& name,
                         std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// Strings are written as fixed-width bytes; bfloat16 and the float8 formats,
// which NumPy has no dtype for, are refused (write them as .pb).
Status write_npy_file(const Tensor& tensor, const std::filesystem::path& path);

}  // namespace rung
