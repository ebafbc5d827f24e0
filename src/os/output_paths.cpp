#include "rung/output_paths.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "os/atomic_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// An input directory is searched this far for a file that is the output; a
// larger tree is not an input set rung reads anyway.
constexpr std::size_t kMaxEntriesSearched = 1'000'000;

struct FileId {
  dev_t device;
  ino_t inode;
  bool operator==(const FileId&) const = default;
};

// stat, so that a symbolic link is the file it names.
std::optional<struct stat> stat_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

FileId id_of(const struct stat& st) { return {st.st_dev, st.st_ino}; }

// The file under `dir` that is `id`, if any: a hard link has another name.
std::optional<fs::path> file_under(const fs::path& dir, const FileId& id) {
  std::error_code ec;
  std::size_t seen = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end; it.increment(ec)) {
    if (++seen > kMaxEntriesSearched) break;
    if (auto st = stat_of(it->path()); st && !S_ISDIR(st->st_mode) && id_of(*st) == id) return it->path();
  }
  return std::nullopt;
}

std::string lexically(const fs::path& p) {
  std::error_code ec;
  fs::path full = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal().string() : full.string();
}

Error refused(const std::string& message) { return Error{ErrorCode::kInvalidArgument, message}; }

Status check_one_output(const NamedPath& out, const std::optional<struct stat>& st, int stat_errno) {
  const std::string name = fmt::format("{} {}", out.what, out.path.string());
  if (st) {
    if (S_ISDIR(st->st_mode)) return refused(fmt::format("{} is a directory: name a file", name));
    if (!S_ISREG(st->st_mode)) return refused(fmt::format("{} is not a regular file (a device, a FIFO or a socket): name a file", name));
  } else if (stat_errno != ENOENT && stat_errno != ENOTDIR) {
    return refused(fmt::format("{}: {}", name, std::strerror(stat_errno)));
  }
  fs::path dir = out.path.parent_path().empty() ? fs::path(".") : out.path.parent_path();
  auto dir_st = stat_of(dir);
  // The nearest ancestor that is there: where the directories will be made, or the
  // file that stands where a directory should be (said as such, not as ENOTDIR).
  if (!dir_st && (errno == ENOTDIR || (errno == ENOENT && out.parents_made))) {
    std::error_code ec;
    dir = fs::absolute(dir, ec);
    while (!dir_st && (errno == ENOENT || errno == ENOTDIR) && dir.has_relative_path()) {
      dir = dir.parent_path();
      dir_st = stat_of(dir);
    }
  }
  if (!dir_st) return refused(fmt::format("{}: the directory {} does not exist", name, dir.string()));
  if (!S_ISDIR(dir_st->st_mode)) return refused(fmt::format("{}: {} is not a directory", name, dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return refused(fmt::format("{}: the directory {} is not writable by you", name, dir.string()));
  return {};
}

}  // namespace

bool same_file(const fs::path& a, const fs::path& b) {
  const auto sa = stat_of(a), sb = stat_of(b);
  return sa && sb && id_of(*sa) == id_of(*sb);
}

Status check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty()) continue;
    const auto st = stat_of(out.path);
    const int stat_errno = st ? 0 : errno;
    if (auto s = check_one_output(out, st, stat_errno); !s) return s;
    for (std::size_t k = 0; k < i; ++k) {
      const NamedPath& other = outputs[k];
      if (other.path.empty()) continue;
      if ((st && same_file(other.path, out.path)) || lexically(other.path) == lexically(out.path)) {
        return refused(fmt::format("{} {} and {} {} name the same file", other.what, other.path.string(), out.what, out.path.string()));
      }
    }
    if (!st) continue;  // a file that is not there yet is no input
    const FileId id = id_of(*st);
    for (const auto& in : inputs) {
      if (in.path.empty()) continue;
      const auto in_st = stat_of(in.path);
      if (!in_st) continue;
      if (S_ISDIR(in_st->st_mode)) {
        if (auto file = file_under(in.path, id)) {
          return refused(fmt::format("{} {} is {} in {} {} (the same file): it would be replaced", out.what, out.path.string(), file->string(),
                                     in.what, in.path.string()));
        }
      } else if (id_of(*in_st) == id) {
        return refused(fmt::format("{} {} is {} {} (the same file): it would be replaced", out.what, out.path.string(), in.what, in.path.string()));
      }
    }
  }
  return {};
}

Status check_output_directory(const NamedPath& dir) {
  if (dir.path.empty()) return {};
  const auto st = stat_of(dir.path);
  if (st && !S_ISDIR(st->st_mode)) return refused(fmt::format("{} {} is not a directory", dir.what, dir.path.string()));
  return {};
}

Status write_output_file(const fs::path& path, std::string_view contents) { return write_file_atomically(path, contents); }

}  // namespace rung
