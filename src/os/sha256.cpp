#include "os/sha256.h"

namespace rung {

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex_digest();
}

}  // namespace rung
