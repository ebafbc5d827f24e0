// The values of a float initializer, read and written: raw_data or
// float_data, never an external file.
#pragma once

#include <vector>

#include "rung/result.h"

namespace onnx {
class TensorProto;
}

namespace rung {

Result<std::vector<float>> float_values(const onnx::TensorProto& t);
void set_float_values(onnx::TensorProto& t, const std::vector<float>& values);  // as raw_data

}  // namespace rung
