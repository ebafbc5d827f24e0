// POSIX: flock on a file opened without following a link; /proc names the holder.
#include <fcntl.h>
#include <pthread.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <string>

#include "os/file_lock.h"
#include "os/lock_file_system.h"
#include "os/posix/descriptor.h"
#include "os/read_file.h"

namespace rung {
namespace {

Error io_error(const std::filesystem::path& file, const std::string& why) {
  return Error{ErrorCode::kIo, fmt::format("{}: {}", file.string(), why)};
}

// The lock files this process has open. A fork copies their descriptors, and a
// flock belongs to the open file, not the process: a provider that forks (in
// process, or a helper that outlives its worker) would keep the probe's lock
// after rung ended, and the next probe would wait for a holder long gone. The
// child of every fork closes its copies (pthread_atfork); the parent's lock
// stands. Slots, not a locked container: the child may not take a mutex
// another thread held at the fork.
constexpr int kLockSlots = 64;
std::atomic<int> g_lock_fds[kLockSlots];

void close_copies_in_child() {
  for (auto& slot : g_lock_fds) {
    const int fd = slot.load(std::memory_order_relaxed);
    if (fd >= 0) ::close(fd);  // closing a copy releases nothing the parent holds (an flock(LOCK_UN) would)
  }
}

void remember(int fd) {
  static std::once_flag registered;
  std::call_once(registered, [] {
    for (auto& slot : g_lock_fds) slot.store(-1);
    ::pthread_atfork(nullptr, nullptr, close_copies_in_child);
  });
  for (auto& slot : g_lock_fds) {
    int empty = -1;
    if (slot.compare_exchange_strong(empty, fd)) return;
  }
  // More than 64 locks held at once: this one stays in a forked child, as before.
}

void forget(int fd) {
  for (auto& slot : g_lock_fds) {
    int held = fd;
    if (slot.compare_exchange_strong(held, -1)) return;
  }
}

}  // namespace

namespace lock_file {

Result<std::intptr_t> open(const std::filesystem::path& file) {
  // O_NOFOLLOW: a link planted under the lock's name must not make us create or lock another file.
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return io_error(file, errno == ELOOP ? "is a symbolic link; a lock file never is" : std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    return io_error(file, "is not a regular file of this user's; remove it");
  }
  remember(fd);
  return std::intptr_t{fd};
}

Result<bool> try_take(std::intptr_t handle, const std::filesystem::path& file) {
  if (::flock(descriptor_of(handle), LOCK_EX | LOCK_NB) == 0) return true;
  if (errno == EWOULDBLOCK) return false;
  return io_error(file, std::strerror(errno));
}

long holder(std::intptr_t handle) {
  char buf[32] = {};
  const ssize_t n = ::pread(descriptor_of(handle), buf, sizeof buf - 1, 0);
  long pid = 0;
  if (n > 0) std::from_chars(buf, buf + n, pid);
  return pid > 0 ? pid : 0;
}

void write_holder(std::intptr_t handle) {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(descriptor_of(handle), 0) == 0) (void)!::pwrite(descriptor_of(handle), pid.data(), pid.size(), 0);
}

void close(std::intptr_t handle) {
  forget(descriptor_of(handle));
  ::close(descriptor_of(handle));  // closing releases the flock
}

}  // namespace lock_file

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

}  // namespace rung
