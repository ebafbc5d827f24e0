// The probe's cache file and the lock that lets one process probe while
// others serve the floor and wait for its answer.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "rung/probe.h"
#include "rung/result.h"

namespace rung {

inline constexpr int kProbeCacheSchema = 1;

struct CacheRead {
  std::optional<ProbeOutcome> outcome;  // set when the file is valid for this fingerprint
  std::string ignored_because;          // why a file that exists was not trusted ("" when absent or valid)
};

CacheRead read_probe_cache(const std::filesystem::path& file, const std::string& fingerprint);
Status write_probe_cache(const std::filesystem::path& file, const std::string& fingerprint, const ProbeOutcome& outcome);

// An exclusive flock on a file in the cache directory, released on destruction.
class CacheLock {
 public:
  // Takes the lock; when another process holds it, sets *was_busy and waits.
  static Result<CacheLock> acquire(const std::filesystem::path& lock_file, bool* was_busy);
  CacheLock(CacheLock&& other) noexcept;
  CacheLock& operator=(CacheLock&&) = delete;
  ~CacheLock();

 private:
  explicit CacheLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace rung
