// POSIX: open(2) with O_NONBLOCK (a FIFO with no writer would make it wait), the
// type from fstat on the open descriptor, then pread.
#include "os/opened_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "os/posix/descriptor.h"
#include "os/regular_file.h"

namespace rung {
namespace {

Error open_error(const std::string& where, int err) {
  if (err == ENOENT) return missing_path(where);
  if (err == ENOTDIR) return Error{ErrorCode::kNotFound, fmt::format("{}: a component of the path is not a directory", where)};
  return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(err))};
}

std::filesystem::file_type type_of(mode_t mode) {
  using T = std::filesystem::file_type;
  switch (mode & S_IFMT) {
    case S_IFREG: return T::regular;
    case S_IFDIR: return T::directory;
    case S_IFIFO: return T::fifo;
    case S_IFCHR: return T::character;
    case S_IFBLK: return T::block;
    case S_IFSOCK: return T::socket;
    case S_IFLNK: return T::symlink;
  }
  return T::unknown;
}

}  // namespace

Result<OpenedFile> OpenedFile::open(const std::filesystem::path& path) {
  std::string where = path.string();
  const int fd = ::open(where.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return open_error(where, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(err))};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return wrong_kind(where, file_kind(type_of(st.st_mode)), WantedKind::kFile);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return OpenedFile(fd, static_cast<std::uint64_t>(st.st_size), std::move(where));
}

OpenedFile::~OpenedFile() {
  if (handle_ != kClosed) ::close(descriptor_of(handle_));
}

Result<std::size_t> OpenedFile::read_at(void* into, std::size_t length, std::uint64_t offset) const {
  for (;;) {
    const auto n = ::pread(descriptor_of(handle_), into, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where_, std::strerror(errno))};
    return static_cast<std::size_t>(n);
  }
}

Result<std::size_t> OpenedFile::read_next(void* into, std::size_t length) {
  for (;;) {
    const auto n = ::read(descriptor_of(handle_), into, length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where_, std::strerror(errno))};
    return static_cast<std::size_t>(n);
  }
}

}  // namespace rung
