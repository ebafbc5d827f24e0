#include "os/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rung {

namespace {

Status rename_into_place(const std::string& tmp, const std::filesystem::path& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e{ErrorCode::kIo, fmt::format("{}: rename failed: {}", path.string(), std::strerror(errno))};
    ::unlink(tmp.c_str());
    return e;
  }
  int dir = ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

}  // namespace

Status write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  auto fail = [&](const char* what) {
    return Error{ErrorCode::kIo, fmt::format("{}: {} failed: {}", path.string(), what, std::strerror(errno))};
  };
  std::string tmp = path.string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return fail("creating a temporary file");
  std::size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = fail("write");
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
    Status s = fail("fsync");
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  ::close(fd);
  return rename_into_place(tmp, path);
}

Status commit_file(const std::filesystem::path& temporary, const std::filesystem::path& final_path) {
  int fd = ::open(temporary.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    Error e{ErrorCode::kIo, fmt::format("{}: fsync failed: {}", temporary.string(), std::strerror(errno))};
    if (fd >= 0) ::close(fd);
    return e;
  }
  ::close(fd);
  return rename_into_place(temporary, final_path);
}

}  // namespace rung
