// A declared image preprocessing (--preprocess, a gate file's "preprocess"),
// then the tensor it makes of a few image sizes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rung/image.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto p = rung::ImagePreprocess::from_json_text(std::string(reinterpret_cast<const char*>(data), size));
  if (!p) return 0;
  (void)p->to_json_text();
  for (auto [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{3, 700}, std::pair{65536, 1}}) {
    auto shape = rung::image_tensor_shape(w, h, *p, "image", 1 << 20);
    if (!shape || std::int64_t{w} * h > 4096) continue;
    rung::Image image{w, h, 3, std::vector<std::uint8_t>(static_cast<std::size_t>(w * h * 3), 100)};
    (void)rung::image_to_tensor(image, *p, "x");
  }
  return 0;
}
