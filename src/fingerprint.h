// Everything a probe decision depends on. The cache is trusted only while the
// fingerprint is unchanged: a driver update, a runtime update or a new model
// file each invalidates it by construction.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/probe.h"
#include "rung/result.h"
#include "rung/runtime.h"

namespace rung {

std::string sha256_hex(std::string_view bytes);
Result<std::string> sha256_of_file(const std::filesystem::path& file);

// SHA-256 of files, remembered in `<cache_dir>/model-hashes.json` by path, size,
// mtime and inode, so an unchanged file is never read again.
class FileHashCache {
 public:
  explicit FileHashCache(std::filesystem::path cache_dir);
  Result<std::string> hash(const std::filesystem::path& file);
  void save();  // best effort: a cache directory that cannot be written only costs re-hashing
  std::size_t files_hashed() const { return hashed_; }

 private:
  std::filesystem::path file_;
  std::string json_;  // the parsed table, kept as JSON text to keep nlohmann out of the header
  bool dirty_ = false;
  std::size_t hashed_ = 0;
};

struct FingerprintInputs {
  const RuntimeBuild* build = nullptr;
  const Hardware* hardware = nullptr;
  const std::vector<RungSpec>* ladder = nullptr;
  const ProbeOptions* options = nullptr;
  std::vector<std::string> probe_models;
};

// The fingerprint as canonical JSON text; equal text means nothing changed.
Result<std::string> make_fingerprint(const FingerprintInputs& in, FileHashCache& hashes);

}  // namespace rung
