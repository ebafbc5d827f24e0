#include "os/file_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rung {

Result<CacheLock> CacheLock::acquire(const std::filesystem::path& lock_file, bool* was_busy) {
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{ErrorCode::kIo, fmt::format("{}: {}", lock_file.string(), std::strerror(errno))};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      ::close(fd);
      return Error{ErrorCode::kIo, fmt::format("{}: {}", lock_file.string(), std::strerror(errno))};
    }
    if (was_busy != nullptr) *was_busy = true;
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd);
        return Error{ErrorCode::kIo, fmt::format("{}: {}", lock_file.string(), std::strerror(errno))};
      }
    }
  }
  return CacheLock(fd);
}

CacheLock::CacheLock(CacheLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

CacheLock::~CacheLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace rung
