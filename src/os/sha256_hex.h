// Bytes as lower-case hex, for the digests of os/sha256.h.
#pragma once

#include <cstddef>
#include <string>

namespace rung {

inline std::string hex_of(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace rung
