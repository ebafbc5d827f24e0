// POSIX: mkdtemp, lstat and O_NOFOLLOW, fsync of each file and of the directory.
#include "os/fresh_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rung {
namespace fs = std::filesystem;

fs::path system_temporary_root() { return "/tmp"; }

Result<fs::path> make_fresh_dir(const fs::path& under, const std::string& prefix) {
  std::string name = (under / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    return Error{ErrorCode::kIo, fmt::format("cannot create a work directory in {}: {}", under.string(), std::strerror(errno))};
  }
  return fs::path(name);
}

std::optional<std::string> read_own_note(const fs::path& dir, const std::string& name, std::size_t max_bytes) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return std::nullopt;
  const fs::path note = dir / name;
  const int fd = ::open(note.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && static_cast<std::size_t>(st.st_size) < max_bytes) {
    std::string buf(max_bytes, '\0');
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n >= 0) text = buf.substr(0, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

Status sync_and_rename_dir(const fs::path& dir, const fs::path& final_path) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", dir.string(), ec.message())};
  if (fs::exists(fs::symlink_status(final_path, ec))) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: already there; nothing was replaced", final_path.string())};
  }
  if (::rename(dir.c_str(), final_path.c_str()) != 0) {
    return Error{ErrorCode::kIo, fmt::format("cannot rename {} to {}: {}", dir.string(), final_path.string(), std::strerror(errno))};
  }
  const fs::path parent = final_path.has_parent_path() ? final_path.parent_path() : fs::path(".");
  if (const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  return {};
}

}  // namespace rung
