// A model's control flow found without the protobuf library (the Windows build's
// graph/compile_ready_without_onnx.cpp), from the model file.
#include <cstddef>
#include <cstdint>

#include "graph/compile_ready.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = rung::fuzz::write_scratch_file("control-flow", "onnx", data, size);
  (void)rung::write_compile_ready(path, path + ".out");
  return 0;
}
