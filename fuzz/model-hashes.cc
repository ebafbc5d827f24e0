// The model-hash cache (model-hashes.json): read on every launch, before the fingerprint.
#include <cstddef>
#include <cstdint>
#include <string>

#include "os/file_hash.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)rung::FileHashCache::check_table(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
