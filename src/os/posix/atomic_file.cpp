#include "os/atomic_file.h"
// POSIX: open(O_EXCL|O_NOFOLLOW), fsync, rename, fsync of the directory.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace rung {

namespace {

Status rename_into_place(const std::string& tmp, const std::filesystem::path& path) {
  // rename replaces a link at `path` itself, never the file it points to.
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e{ErrorCode::kIo, fmt::format("{}: rename failed: {}", path.string(), std::strerror(errno))};
    ::unlink(tmp.c_str());
    return e;
  }
  int dir = ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

// A new file beside `path` under a random name: O_EXCL never opens an existing
// file or follows a link planted under that name, and mode 0666 leaves the
// permissions to the umask, as for any file the user creates.
int create_temporary_beside(const std::filesystem::path& path, std::string& name) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  for (int attempt = 0; attempt < 100; ++attempt) {
    name = fmt::format("{}.tmp.{:012x}", path.string(), random() & 0xffffffffffffULL);
    int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

// Every byte of `contents` to `fd`, or false with errno saying why (a short write at a size limit included).
bool write_all(int fd, std::string_view contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A write that failed part-way leaves nothing: the file is closed (when open) and
// removed. `why` is made by the caller before this runs, so it holds their errno.
Error abandoned(int fd, const std::string& name, Error why) {
  if (fd >= 0) ::close(fd);
  ::unlink(name.c_str());
  return why;
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  auto fail = [&](const char* what) {
    return Error{ErrorCode::kIo, fmt::format("{}: {} failed: {}", path.string(), what, std::strerror(errno))};
  };
  std::string tmp;
  int fd = create_temporary_beside(path, tmp);
  if (fd < 0) return fail("creating a temporary file");
  if (!write_all(fd, contents)) return abandoned(fd, tmp, fail("write"));
  if (::fsync(fd) != 0) return abandoned(fd, tmp, fail("fsync"));
  ::close(fd);
  return rename_into_place(tmp, path);
}

Status write_scratch_file(const std::filesystem::path& path, std::string_view contents) {
  auto fail = [&](const char* what) {
    return Error{ErrorCode::kIo, fmt::format("{}: {} failed: {}", path.string(), what, std::strerror(errno))};
  };
  ::unlink(path.c_str());  // a retried job's earlier file (or a link in its place) goes, never written through
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return fail("creating the file");
  if (!write_all(fd, contents)) return abandoned(fd, path.string(), fail("write"));
  if (::close(fd) != 0) return abandoned(-1, path.string(), fail("close"));
  return {};
}

Status commit_file(const std::filesystem::path& temporary, const std::filesystem::path& final_path) {
  // The temporary must be the file the child wrote, not a link put in its place.
  int fd = ::open(temporary.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ::fsync(fd) != 0) {
    Error e{ErrorCode::kIo, fmt::format("{}: not committed: {}", temporary.string(),
                                        fd >= 0 && !S_ISREG(st.st_mode) ? "not a regular file" : std::strerror(errno))};
    if (fd >= 0) ::close(fd);
    return e;
  }
  ::close(fd);
  return rename_into_place(temporary, final_path);
}

}  // namespace rung
