// NumPy .npy arrays (format 1.0-3.0, C order, little-endian) as tensors.
#pragma once

#include <filesystem>

#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

// The tensor is named after the file's stem.
Result<Tensor> read_npy_file(const std::filesystem::path& path);

}  // namespace rung
