// SHA-256 from the system's well-kept implementation: OpenSSL's libcrypto on
// Linux (os/posix/sha256.cpp), Windows' CNG (os/windows/sha256.cpp). Everything
// rung hashes (files, fingerprints, records) goes through this one digest.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace rung {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  // The digest in lower-case hex (64 characters); the object is spent after it.
  std::string hex_digest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "ba7816bf…" for "abc".
std::string sha256_hex(std::string_view bytes);

}  // namespace rung
