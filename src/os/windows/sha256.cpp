// Windows: CNG's SHA-256 (BCrypt), the system's own; Debian has no mingw build of OpenSSL.
#include <windows.h>
#include <bcrypt.h>

#include "os/sha256.h"
#include "os/sha256_hex.h"

namespace rung {

struct Sha256::State {
  BCRYPT_ALG_HANDLE algorithm = nullptr;
  BCRYPT_HASH_HANDLE hash = nullptr;
  ~State() {
    if (hash != nullptr) BCryptDestroyHash(hash);
    if (algorithm != nullptr) BCryptCloseAlgorithmProvider(algorithm, 0);
  }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  if (BCryptOpenAlgorithmProvider(&state_->algorithm, BCRYPT_SHA256_ALGORITHM, nullptr, 0) != 0 ||
      BCryptCreateHash(state_->algorithm, &state_->hash, nullptr, 0, nullptr, 0, 0) != 0) {
    state_->hash = nullptr;
  }
}
Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(const_cast<void*>(data));
  while (state_->hash != nullptr && size > 0) {  // BCryptHashData takes at most a ULONG at a time
    const ULONG n = size > 0x40000000 ? 0x40000000 : static_cast<ULONG>(size);
    BCryptHashData(state_->hash, bytes, n, 0);
    bytes += n;
    size -= n;
  }
}

std::string Sha256::hex_digest() {
  unsigned char digest[32] = {};
  if (state_->hash == nullptr || BCryptFinishHash(state_->hash, digest, sizeof digest, 0) != 0) return {};
  return hex_of(digest, sizeof digest);
}

}  // namespace rung
