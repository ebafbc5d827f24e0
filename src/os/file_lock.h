// An exclusive lock on a file (flock on Linux, LockFileEx on Windows), so one process works on a cache
// directory while others wait for its answer, for a bounded time, knowing who
// they wait for: the holder writes its process id into the file.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>

#include "rung/result.h"

namespace rung {

// An exclusive lock on a file in the cache directory, released on destruction.
class CacheLock {
 public:
  // Takes the lock. When another process holds it, calls `on_busy` once with
  // the holder's id (0 when it cannot be read) and waits up to `wait`; past
  // that, an error naming the holder. The file is opened without following a
  // link and must be a regular file of this user's. When `stop` turns true while
  // it waits (an engine being freed), it gives up at once with an error saying so.
  static Result<CacheLock> acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds wait,
                                   const std::function<void(long holder)>& on_busy = {}, const std::atomic<bool>* stop = nullptr);
  CacheLock(CacheLock&& other) noexcept;
  CacheLock& operator=(CacheLock&&) = delete;
  ~CacheLock();

 private:
  // The system's handle for the open lock file: a descriptor on POSIX, a HANDLE on Windows.
  explicit CacheLock(std::intptr_t handle) : handle_(handle) {}
  std::intptr_t handle_ = -1;
};

// "process 1234 (rung probe --cache-dir …)", or "process 1234" when its
// command line cannot be read; "an unknown process" for 0.
std::string describe_process(long pid);

}  // namespace rung
