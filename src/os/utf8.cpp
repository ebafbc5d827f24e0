#include "os/utf8.h"

namespace rung {

Utf8Char decode_utf8(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return {b, 1};
  std::size_t n = 0;
  std::uint32_t code = 0, least = 0;
  if ((b & 0xE0) == 0xC0) {
    n = 2, code = b & 0x1F, least = 0x80;
  } else if ((b & 0xF0) == 0xE0) {
    n = 3, code = b & 0x0F, least = 0x800;
  } else if ((b & 0xF8) == 0xF0) {
    n = 4, code = b & 0x07, least = 0x10000;
  } else {
    return {};
  }
  if (i + n > text.size()) return {};
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and values past Unicode are not UTF-8.
  if (code < least || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return {};
  return {code, n};
}

bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    if (c.length == 0) return false;
    i += c.length;
  }
  return true;
}

}  // namespace rung
