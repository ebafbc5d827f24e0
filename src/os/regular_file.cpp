#include "os/regular_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rung {
namespace {

Error not_regular(const std::filesystem::path& path, mode_t mode) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("{} is {}, not a regular file", path.string(), file_kind(mode))};
}

Error cannot_open(const std::filesystem::path& path, int err) {
  return Error{err == ENOENT || err == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kIo,
               fmt::format("{}: {}", path.string(), std::strerror(err))};
}

}  // namespace

std::string file_kind(std::uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
  }
  return "not a file";
}

Status check_regular_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return cannot_open(path, errno);
  if (!S_ISREG(st.st_mode)) return not_regular(path, st.st_mode);
  return {};
}

Status check_model_file_kind(const std::string& name, const std::filesystem::path& path) {
  auto st = check_regular_file(path);
  if (st || st.error().code == ErrorCode::kNotFound) return {};
  return Error{st.error().code, fmt::format("model {}: {}", name, st.error().message)};
}

Result<int> open_regular_file(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return cannot_open(path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    ::close(fd);
    return not_regular(path, mode);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace rung
