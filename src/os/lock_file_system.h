// The per-system half of the cache lock (os/file_lock.h): how a lock file is
// opened, taken without waiting, and told who holds it. os/posix/file_lock.cpp
// (flock) and os/windows/file_lock.cpp (LockFileEx); the waiting, and what a
// waiter is told, are os/file_lock.cpp's, the same on every system.
#pragma once

#include <cstdint>
#include <filesystem>

#include "rung/result.h"

namespace rung::lock_file {

inline constexpr std::intptr_t kNoHandle = -1;

// The lock file, created when missing, never through a link planted under its
// name; refused unless it is a regular file of this user's. Errors name it.
Result<std::intptr_t> open(const std::filesystem::path& file);
// Takes the lock without waiting: true when taken, false when another holds it.
Result<bool> try_take(std::intptr_t handle, const std::filesystem::path& file);
// The process id the holder wrote into the file; 0 when it cannot be read.
long holder(std::intptr_t handle);
// Writes this process's id into the file, for those who will wait.
void write_holder(std::intptr_t handle);
// Closes the file, which releases the lock.
void close(std::intptr_t handle);

}  // namespace rung::lock_file
