// Linux: OpenSSL's EVP digest.
#include <openssl/evp.h>

#include "os/sha256.h"
#include "os/sha256_hex.h"

namespace rung {

struct Sha256::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) { EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr); }
Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) { EVP_DigestUpdate(state_->ctx, data, size); }

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(state_->ctx, digest, &n);
  return hex_of(digest, n);
}

}  // namespace rung
