#include "graph/tensor_data.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstring>

#include "rung/tensor.h"

namespace rung {

Result<std::vector<float>> float_values(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::FLOAT) return Error{ErrorCode::kUnsupported, fmt::format("initializer '{}' is not float32", t.name())};
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    return Error{ErrorCode::kUnsupported, fmt::format("initializer '{}' keeps its data in an external file; rung reads weights held in the model", t.name())};
  }
  // Checked: a negative dimension or a product past 2^63 is an error, not a wrapped size.
  auto count = element_count(std::vector<std::int64_t>(t.dims().begin(), t.dims().end()));
  if (!count) return Error{ErrorCode::kInvalidArgument, fmt::format("initializer '{}': {}", t.name(), count.error().message)};
  const std::size_t n = static_cast<std::size_t>(*count);
  const std::size_t held = t.raw_data().empty() ? static_cast<std::size_t>(t.float_data_size()) : t.raw_data().size() / sizeof(float);
  if (n != held) return Error{ErrorCode::kInvalidArgument, fmt::format("initializer '{}': its data does not match its dims", t.name())};
  std::vector<float> v(n);
  if (!t.raw_data().empty()) {
    if (t.raw_data().size() != n * sizeof(float)) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("initializer '{}': raw data does not match its dims", t.name())};
    }
    std::memcpy(v.data(), t.raw_data().data(), n * sizeof(float));
  } else {
    if (static_cast<std::size_t>(t.float_data_size()) != n) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("initializer '{}': data does not match its dims", t.name())};
    }
    std::copy(t.float_data().begin(), t.float_data().end(), v.begin());
  }
  return v;
}

void set_float_values(onnx::TensorProto& t, const std::vector<float>& values) {
  t.clear_float_data();
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
}

}  // namespace rung
