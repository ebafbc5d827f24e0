#include "os/read_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "os/regular_file.h"

namespace rung {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  auto fd = open_regular_file(path);  // a FIFO or a device would never end
  if (!fd) return {};
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(*fd);
  return out;
}

std::string byte_size_text(std::uint64_t bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string non_regular_kind(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  return fmt::format("is {}", file_kind(st.st_mode));
}

Result<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view limit_option) {
  const std::string where = path.string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked before any read.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Error{ErrorCode::kNotFound, fmt::format("{}: does not exist", where)};
    if (err == ENOTDIR) return Error{ErrorCode::kNotFound, fmt::format("{}: a component of the path is not a directory", where)};
    return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(err))};
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(errno))};
  if (!S_ISREG(st.st_mode)) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: is {}, not a file", where, file_kind(st.st_mode))};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: is {}; rung reads at most {} here{}", where, byte_size_text(size), byte_size_text(max_bytes),
                             limit_option.empty() ? "" : fmt::format(" (raise it with {})", limit_option))};
  }
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    const auto n = ::read(f.fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(errno))};
    if (n == 0) break;  // shrank while read: what is there
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

}  // namespace rung
