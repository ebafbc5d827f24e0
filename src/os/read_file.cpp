#include "os/read_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

Error open_error(const std::string& where, int err) {
  if (err == ENOENT) return Error{ErrorCode::kNotFound, fmt::format("{}: does not exist", where)};
  if (err == ENOTDIR) return Error{ErrorCode::kNotFound, fmt::format("{}: a component of the path is not a directory", where)};
  return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(err))};
}

// Opened without blocking and checked to be a regular file; its size in `st`.
Result<int> open_checked(const std::string& where, struct stat& st) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked before any read.
  const int fd = ::open(where.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return open_error(where, errno);
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(err))};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: is {}, not a file", where, file_kind(st.st_mode))};
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// "for a document", "for a tensor file (raise it with --max-tensor-mb)", or "here".
Error too_big(const std::string& where, std::uint64_t size, std::uint64_t max_bytes, const std::string& limit_words) {
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{}: is {}; rung reads at most {} {}", where, byte_size_text(size), byte_size_text(max_bytes), limit_words)};
}

// Reads up to `size` bytes from the start; a file that shrank while read gives what is there.
Result<std::string> read_bytes(int fd, const std::string& where, std::uint64_t size, off_t from = 0) {
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < out.size()) {
    const auto n = ::pread(fd, out.data() + done, out.size() - done, from + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, std::strerror(errno))};
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

Result<std::string> read_limited(const std::filesystem::path& path, std::uint64_t max_bytes, const std::string& limit_words) {
  const std::string where = path.string();
  struct stat st {};
  auto fd = open_checked(where, st);
  if (!fd) return fd.error();
  Fd f{*fd};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) return too_big(where, size, max_bytes, limit_words);
  return read_bytes(f.fd, where, size);
}

std::string kind_words(const FileKindLimit& k) {
  return k.raised_by == nullptr ? fmt::format("for {}", k.name) : fmt::format("for {} (raise it with {})", k.name, k.raised_by);
}

}  // namespace

Result<std::string> read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view limit_option) {
  return read_limited(path, max_bytes, limit_option.empty() ? "here" : fmt::format("here (raise it with {})", limit_option));
}

const FileKindLimit& file_kind_limit(FileKind kind) {
  for (const auto& k : kFileKinds) {
    if (k.kind == kind) return k;
  }
  return kFileKinds[0];  // unreachable: every kind has its row
}

Result<std::string> read_input_file(const std::filesystem::path& path, FileKind kind) {
  return read_input_file(path, kind, file_kind_limit(kind).max_bytes);
}

Result<std::string> read_input_file(const std::filesystem::path& path, FileKind kind, std::uint64_t max_bytes) {
  return read_limited(path, max_bytes, kind_words(file_kind_limit(kind)));
}

std::optional<std::string> read_input_file_if_usable(const std::filesystem::path& path, FileKind kind) {
  auto text = read_input_file(path, kind);
  if (!text) return std::nullopt;
  return std::move(*text);
}

std::string read_file_tail(const std::filesystem::path& path, std::uint64_t max_bytes) {
  struct stat st {};
  auto fd = open_checked(path.string(), st);
  if (!fd) return {};
  Fd f{*fd};
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t from = size > max_bytes ? size - max_bytes : 0;
  auto text = read_bytes(f.fd, path.string(), size - from, static_cast<off_t>(from));
  return text ? std::move(*text) : std::string();
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> InputFile::read(std::uint64_t offset, std::uint64_t length) const {
  if (offset >= size_) return std::string();
  return read_bytes(fd_, where_, std::min(length, size_ - offset), static_cast<off_t>(offset));
}

Result<InputFile> open_input_file(const std::filesystem::path& path, FileKind kind) {
  return open_input_file(path, kind, file_kind_limit(kind).max_bytes);
}

Result<InputFile> open_input_file(const std::filesystem::path& path, FileKind kind, std::uint64_t max_bytes) {
  const std::string where = path.string();
  struct stat st {};
  auto fd = open_checked(where, st);
  if (!fd) return fd.error();
  InputFile file(*fd, static_cast<std::uint64_t>(st.st_size), where);
  if (file.size() > max_bytes) return too_big(where, file.size(), max_bytes, kind_words(file_kind_limit(kind)));
  return file;
}

std::optional<std::string> read_system_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  struct stat st {};
  auto fd = open_checked(path.string(), st);
  if (!fd) return std::nullopt;
  Fd f{*fd};
  // Read to the end (a pseudo-file's stated size means nothing), stopping at the bound.
  std::string out;
  char buf[1 << 16];
  while (out.size() < max_bytes) {
    const auto n = ::read(f.fd, buf, std::min<std::uint64_t>(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace rung
