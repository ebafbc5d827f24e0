// SHA-256 of files (os/sha256.h's digest), and a cache of file hashes kept
// beside a cache directory so an unchanged file is never read twice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "os/sha256.h"
#include "rung/result.h"

namespace rung {

Result<std::string> sha256_of_file(const std::filesystem::path& file);

// SHA-256 of files, remembered in `<cache_dir>/model-hashes.json` by path, size,
// mtime and inode, so an unchanged file is never read again. A damaged table
// (not JSON, an entry of the wrong shape) is ignored as a whole and rewritten.
class FileHashCache {
 public:
  explicit FileHashCache(std::filesystem::path cache_dir);
  Result<std::string> hash(const std::filesystem::path& file);
  // Best effort: a cache directory that cannot be written only costs re-hashing. Read,
  // merged and rewritten under model-hashes.lock, so probes hashing at once (other
  // models, other processes) keep each other's entries.
  void save();
  std::size_t files_hashed() const { return hashed_; }
  // Why the table on disk was not used ("" when absent or used), naming the file.
  const std::string& ignored_because() const { return ignored_because_; }

  // The table's JSON text checked, or why it cannot be used: for the cache and its fuzzer.
  static Status check_table(const std::string& text);

 private:
  std::filesystem::path file_;
  std::string json_;  // the parsed table, kept as JSON text to keep nlohmann out of the header
  std::string ignored_because_;
  bool dirty_ = false;
  std::size_t hashed_ = 0;
  std::set<std::string> fresh_;  // the entries this cache hashed: they win over the file's
};

// A file's size, inode (file id) and modification time, from its identity
// (os/file_identity.h): what says "unchanged" without reading it.
struct FileStamp {
  std::uint64_t size = 0, inode = 0;
  std::int64_t mtime_ns = 0;
};
bool stamp_of(const std::filesystem::path& file, FileStamp& stamp);

}  // namespace rung
