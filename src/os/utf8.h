// UTF-8 decoded one character at a time: the one decoder behind the JSON
// writer (os/json_text.h) and the terminal printer (rung/printable.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rung {

// One character of UTF-8 at `text[i]`: its code point and its length in
// bytes; length 0 when the bytes there are not UTF-8 (a stray continuation
// byte, a cut sequence, an overlong form, a surrogate, a value past U+10FFFF).
struct Utf8Char {
  std::uint32_t code = 0;
  std::size_t length = 0;
};
Utf8Char decode_utf8(std::string_view text, std::size_t i);

// Whether every byte of `text` belongs to a valid UTF-8 character.
bool is_utf8(std::string_view text);

}  // namespace rung
