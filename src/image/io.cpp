// Decoding and encoding images through Debian's libstb (stb_image, stb_image_write),
// loaded when the first image is read or written (os/system_library.h), not at exec.
#include <fmt/format.h>
#include <stb_image.h>
#include <stb_image_write.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstring>
#include <memory>

#include "os/atomic_file.h"
#include "os/read_file.h"
#include "os/system_library.h"
#include "rung/image.h"

namespace rung {

bool is_image_file(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::array<const char*, 4> known{".png", ".jpg", ".jpeg", ".bmp"};
  return std::find_if(known.begin(), known.end(), [&](const char* k) { return ext == k; }) != known.end();
}

namespace {

// The formats rung decodes, told by their first bytes. stb_image reads more
// (GIF, TGA, PSD, HDR, PIC, PNM), but its lesser decoders are where a damaged
// file reaches memory it should not (a PNM with a 6-digit maxval read past the
// buffer, found by fuzz/image.cc): photographs and scans come as these three.
bool is_decoded_format(std::string_view b) {
  return b.starts_with("\x89PNG\r\n\x1a\n") || b.starts_with("\xff\xd8\xff") || b.starts_with("BM");
}

// The stb functions rung calls, each typed by stb's own declaration.
struct LibStb {
  decltype(&::stbi_failure_reason) failure_reason;
  decltype(&::stbi_info_from_memory) info_from_memory;
  decltype(&::stbi_load_from_memory) load_from_memory;
  decltype(&::stbi_image_free) image_free;
  decltype(&::stbi_write_png_to_func) write_png_to_func;
};

Result<const LibStb*> libstb() {
  return bind_system_library<LibStb>(SystemLibrary::kImages, "stb, for images (Debian's package libstb0 provides it)", [](SymbolBinder& bind, LibStb& stb) {
        bind("stbi_failure_reason", stb.failure_reason);
        bind("stbi_info_from_memory", stb.info_from_memory);
        bind("stbi_load_from_memory", stb.load_from_memory);
        bind("stbi_image_free", stb.image_free);
        bind("stbi_write_png_to_func", stb.write_png_to_func);
      });
}

}  // namespace

Result<Image> decode_image(std::string_view bytes, const std::string& where, int channels, std::uint64_t max_bytes) {
  if (channels < 1 || channels > 4) return Error{ErrorCode::kInvalidArgument, fmt::format("cannot read an image as {} channels", channels)};
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: too large an image file", where)};
  auto loaded = libstb();
  if (!loaded) return Error{loaded.error().code, fmt::format("{}: {}", where, loaded.error().message)};
  const LibStb& stb = **loaded;
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int length = static_cast<int>(bytes.size());
  auto undecodable = [&] {
    const char* why = stb.failure_reason();
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the image does not decode ({})", where, why != nullptr ? why : "unknown reason")};
  };
  if (!is_decoded_format(bytes)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not a PNG, JPEG or BMP image (rung decodes only these)", where)};
  }
  // The header first: its size is checked before stb_image allocates the pixels.
  int w = 0, h = 0, n = 0;
  if (stb.info_from_memory(data, length, &w, &h, &n) == 0) return undecodable();
  if (w <= 0 || h <= 0 || w > kMaxImageSide || h > kMaxImageSide) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a {}x{} image; rung reads images up to {} px a side", where, w, h, kMaxImageSide)};
  }
  RUNG_RETURN_IF_ERROR(tensor_bytes(where, ElementType::kUint8, {h, w, channels}, max_bytes));
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stb.load_from_memory(data, length, &w, &h, &n, channels), stb.image_free);
  if (!pixels) return undecodable();
  Image img;
  img.width = w;
  img.height = h;
  img.channels = channels;
  img.pixels.assign(pixels.get(), pixels.get() + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * static_cast<std::size_t>(channels));
  return img;
}

Result<Image> read_image(const std::filesystem::path& path, int channels, std::uint64_t max_bytes) {
  auto bytes = read_input_file(path, FileKind::kImage, max_bytes);
  if (!bytes) return bytes.error();
  return decode_image(*bytes, path.string(), channels, max_bytes);
}

Status write_png(const Image& image, const std::filesystem::path& path) {
  auto loaded = libstb();
  if (!loaded) return Error{loaded.error().code, fmt::format("{}: {}", path.string(), loaded.error().message)};
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
  };
  if ((*loaded)->write_png_to_func(append, &png, image.width, image.height, image.channels, image.pixels.data(),
                             image.width * image.channels) == 0) {
    return Error{ErrorCode::kIo, fmt::format("{}: the image could not be encoded as PNG", path.string())};
  }
  return write_file_atomically(path, png);
}

}  // namespace rung
