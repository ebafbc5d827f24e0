// Linux: OpenSSL's EVP digest, from libcrypto loaded on the first digest
// (os/system_library.h): a warm launch hashes nothing, and linking libcrypto
// cost every launch its loading, about 2 ms. The header gives the types.
#include <openssl/evp.h>

#include "os/sha256.h"
#include "os/sha256_hex.h"
#include "os/system_library.h"

namespace rung {

// Outside the anonymous namespace: Sha256::State (declared in the header) holds one.
struct LibCrypto {
  decltype(&::EVP_MD_CTX_new) ctx_new;
  decltype(&::EVP_MD_CTX_free) ctx_free;
  decltype(&::EVP_sha256) sha256;
  decltype(&::EVP_DigestInit_ex) init;
  decltype(&::EVP_DigestUpdate) update;
  decltype(&::EVP_DigestFinal_ex) final;
};

namespace {

// Bound once per process (os/system_library.h). Without it nothing can be hashed, and a fingerprint
// or record made without its hash would be wrong: LibraryUnavailable (rung/result.h).
const LibCrypto& libcrypto() {
  const auto loaded = bind_system_library<LibCrypto>(
      SystemLibrary::kCrypto, "OpenSSL's libcrypto, for SHA-256 (Debian's package libssl3 provides it)", [](SymbolBinder& bind, LibCrypto& c) {
        bind("EVP_MD_CTX_new", c.ctx_new);
        bind("EVP_MD_CTX_free", c.ctx_free);
        bind("EVP_sha256", c.sha256);
        bind("EVP_DigestInit_ex", c.init);
        bind("EVP_DigestUpdate", c.update);
        bind("EVP_DigestFinal_ex", c.final);
      });
  if (!loaded) throw LibraryUnavailable(loaded.error().message);
  return **loaded;
}

}  // namespace

struct Sha256::State {
  const LibCrypto& crypto = libcrypto();
  EVP_MD_CTX* ctx = crypto.ctx_new();
  ~State() { crypto.ctx_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) { state_->crypto.init(state_->ctx, state_->crypto.sha256(), nullptr); }
Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) { state_->crypto.update(state_->ctx, data, size); }

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  state_->crypto.final(state_->ctx, digest, &n);
  return hex_of(digest, n);
}

}  // namespace rung
