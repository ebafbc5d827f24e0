// A TensorProto read without the protobuf library (the Windows build's reader,
// session/tensor_file_without_onnx.cpp): recorded inputs and the workers' outputs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "session/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto t = rung::parse_tensor_proto(std::string_view(reinterpret_cast<const char*>(data), size), "t.pb", "t", 1 << 20);
  if (t) (void)t->to_doubles();
  return 0;
}
