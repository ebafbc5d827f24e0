#include "os/file_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <thread>

#include "os/read_file.h"

namespace rung {
namespace {

Error io_error(const std::filesystem::path& file, const std::string& why) {
  return Error{ErrorCode::kIo, fmt::format("{}: {}", file.string(), why)};
}

long holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  long pid = 0;
  if (n > 0) std::from_chars(buf, buf + n, pid);
  return pid > 0 ? pid : 0;
}

void write_holder(int fd) {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
}

}  // namespace

std::string describe_process(long pid) {
  if (pid <= 0) return "an unknown process";
  std::string cmdline = read_system_file(fmt::format("/proc/{}/cmdline", pid)).value_or("");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  for (char& c : cmdline) {
    if (c == '\0') c = ' ';
  }
  if (cmdline.size() > 160) cmdline = cmdline.substr(0, 160) + "…";
  return cmdline.empty() ? fmt::format("process {}", pid) : fmt::format("process {} ({})", pid, cmdline);
}

Result<CacheLock> CacheLock::acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds wait,
                                     const std::function<void(long)>& on_busy) {
  // O_NOFOLLOW: a link planted under the lock's name must not make us create or lock another file.
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return io_error(lock_file, errno == ELOOP ? "is a symbolic link; a lock file never is" : std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    return io_error(lock_file, "is not a regular file of this user's; remove it");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      Error e = io_error(lock_file, std::strerror(errno));
      ::close(fd);
      return e;
    }
    const long holder = holder_of(fd);
    if (on_busy) on_busy(holder);
    const auto until = std::chrono::steady_clock::now() + wait;
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (std::chrono::steady_clock::now() >= until) {
        const long now_holding = holder_of(fd);
        ::close(fd);
        return Error{ErrorCode::kIo,
                     fmt::format("{} is held by {} and was not released within {:.3g} s; it may be hung: end it, or use another directory",
                                 lock_file.string(), describe_process(now_holding ? now_holding : holder),
                                 std::chrono::duration<double>(wait).count())};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  write_holder(fd);
  return CacheLock(fd);
}

CacheLock::CacheLock(CacheLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

CacheLock::~CacheLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace rung
