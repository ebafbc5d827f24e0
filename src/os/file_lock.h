// An exclusive lock on a file (flock), so one process works on a cache
// directory while others wait for its answer.
#pragma once

#include <filesystem>

#include "rung/result.h"

namespace rung {

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
