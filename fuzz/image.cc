// An image file (any format stb_image reads): parity inputs, decoded after its header is checked.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rung/image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)rung::decode_image(bytes, "image", 3, 4 << 20);
  (void)rung::decode_image(bytes, "image", 1, 4 << 20);
  return 0;
}
