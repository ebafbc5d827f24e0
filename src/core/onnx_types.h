// ONNX's numbering of element types (TensorProto.DataType), which ONNX Runtime's
// ONNXTensorElementDataType shares: the one table that maps it to rung's own.
#pragma once

#include <string>

#include "rung/tensor.h"

namespace rung {

int onnx_data_type(ElementType t);            // 0 (undefined) for kUnsupported
ElementType element_type_from_onnx(int code);  // kUnsupported for a type rung does not hold
// The type's name for messages, known to rung or not: "float32", "complex64", "int4".
std::string onnx_data_type_name(int code);

}  // namespace rung
