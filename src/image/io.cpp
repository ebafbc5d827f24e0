// Decoding and encoding images through Debian's libstb (stb_image, stb_image_write).
#include <fmt/format.h>
#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <memory>

#include "os/atomic_file.h"
#include "rung/image.h"

namespace rung {

bool is_image_file(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::array<const char*, 11> known{".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tga", ".pgm", ".ppm", ".pnm", ".psd", ".hdr"};
  return std::find_if(known.begin(), known.end(), [&](const char* k) { return ext == k; }) != known.end();
}

Result<Image> read_image(const std::filesystem::path& path, int channels) {
  if (channels < 1 || channels > 4) return Error{ErrorCode::kInvalidArgument, fmt::format("cannot read an image as {} channels", channels)};
  int w = 0, h = 0, n = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> data(stbi_load(path.c_str(), &w, &h, &n, channels), stbi_image_free);
  if (!data) {
    const char* why = stbi_failure_reason();
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: the image does not decode ({})", path.string(), why != nullptr ? why : "unknown reason")};
  }
  Image img;
  img.width = w;
  img.height = h;
  img.channels = channels;
  img.pixels.assign(data.get(), data.get() + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * static_cast<std::size_t>(channels));
  return img;
}

Status write_png(const Image& image, const std::filesystem::path& path) {
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if (stbi_write_png_to_func(append, &png, image.width, image.height, image.channels, image.pixels.data(),
                             image.width * image.channels) == 0) {
    return Error{ErrorCode::kIo, fmt::format("{}: the image could not be encoded as PNG", path.string())};
  }
  return write_file_atomically(path, png);
}

}  // namespace rung
