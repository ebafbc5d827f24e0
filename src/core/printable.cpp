#include "rung/printable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace rung {
namespace {

// One character of UTF-8 at `text[i]`: its code point and length; length 0 when the bytes there are not UTF-8.
struct Decoded {
  std::uint32_t code = 0;
  std::size_t length = 0;
};

Decoded decode(std::string_view text, std::size_t i) {
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

bool must_escape(std::uint32_t c) {
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

std::string escape(std::uint32_t c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return c < 0x80 ? fmt::format("\\x{:02x}", c) : fmt::format("\\u{:04x}", c);
  }
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) return out + "…";
    const Decoded d = decode(text, i);
    if (d.length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (must_escape(d.code)) {
      out += escape(d.code);
    } else {
      out.append(text.substr(i, d.length));
    }
    i += d.length;
  }
  return out;
}

std::string not_utf8_why(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Decoded d = decode(text, i);
    if (d.length == 0) return fmt::format("is not UTF-8 (byte \\x{:02x} at {})", static_cast<unsigned char>(text[i]), i);
    i += d.length;
  }
  return {};
}

std::string unprintable_why(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Decoded d = decode(text, i);
    if (d.length == 0) return fmt::format("is not UTF-8 (byte \\x{:02x} at {})", static_cast<unsigned char>(text[i]), i);
    if (must_escape(d.code)) return fmt::format("holds a control character ({} at byte {})", escape(d.code), i);
    i += d.length;
  }
  return {};
}

}  // namespace rung
