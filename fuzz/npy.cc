// A NumPy .npy array: parity inputs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "session/npy_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto t = rung::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size), "t.npy", "t", 1 << 20);
  if (t) (void)t->to_doubles();
  return 0;
}
