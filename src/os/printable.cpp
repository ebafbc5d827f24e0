#include "rung/printable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "os/utf8.h"

namespace rung {
namespace {

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

std::string escaped(std::string_view text, std::size_t max_bytes, bool keep_lines) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) return out + "…";
    const Utf8Char d = decode_utf8(text, i);
    if (d.length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (must_escape(d.code) && !(keep_lines && (d.code == '\n' || d.code == '\t'))) {
      out += escape(d.code);
    } else {
      out.append(text.substr(i, d.length));
    }
    i += d.length;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) { return escaped(text, max_bytes, false); }

std::string printable_lines(std::string_view text) { return escaped(text, std::string_view::npos, true); }

std::string not_utf8_why(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char d = decode_utf8(text, i);
    if (d.length == 0) return fmt::format("is not UTF-8 (byte \\x{:02x} at {})", static_cast<unsigned char>(text[i]), i);
    i += d.length;
  }
  return {};
}

std::string unprintable_why(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char d = decode_utf8(text, i);
    if (d.length == 0) return fmt::format("is not UTF-8 (byte \\x{:02x} at {})", static_cast<unsigned char>(text[i]), i);
    if (must_escape(d.code)) return fmt::format("holds a control character ({} at byte {})", escape(d.code), i);
    i += d.length;
  }
  return {};
}

}  // namespace rung
