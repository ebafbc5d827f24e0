#include "os/work_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>

#include "os/atomic_file.h"
#include "os/path_trust.h"
#include "os/process_identity.h"
#include "os/termination.h"

namespace rung {
namespace fs = std::filesystem;

fs::path temporary_root() {
  if (const char* env = std::getenv("TMPDIR"); env != nullptr && *env) {
    const fs::path dir(env);
    std::error_code ec;
    if (dir.is_absolute() && fs::is_directory(dir, ec) && check_path_trusted(dir)) return dir;
  }
  return "/tmp";
}

namespace {

// NAME.XXXXXX, as mkdtemp names them.
bool named_as_made(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot != std::string::npos && dot > 0 && name.size() - dot - 1 == 6;
}

// The maker named by a work directory's note, when the directory and the note
// are this user's own (lstat: a link is never followed) and the note is whole.
std::optional<ProcessIdentity> maker_of(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return std::nullopt;
  const fs::path note = dir / kWorkDirOwnerFile;
  const int fd = ::open(note.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[1024];
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_size < static_cast<off_t>(sizeof buf)) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) text.assign(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return ProcessIdentity::parse(text);
}

// Once per parent and process: later work directories there were made after the sweep.
bool first_visit(const fs::path& parent) {
  static std::mutex mutex;
  static std::set<std::string> visited;
  std::lock_guard lock(mutex);
  return visited.insert(parent.lexically_normal().string()).second;
}

}  // namespace

std::size_t remove_abandoned_work_dirs(const fs::path& parent) {
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    if (!named_as_made(it->path().filename().string())) continue;
    auto maker = maker_of(it->path());
    if (!maker || !process_has_ended(*maker)) continue;
    std::error_code rm;
    fs::remove_all(it->path(), rm);  // removes links inside, never what they point to
    if (!rm) ++removed;
  }
  return removed;
}

Result<WorkDir> WorkDir::create(const std::string& prefix, const fs::path& parent) {
  const fs::path under = parent.empty() ? temporary_root() : parent;
  if (first_visit(under)) remove_abandoned_work_dirs(under);
  std::string name = (under / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    return Error{ErrorCode::kIo, fmt::format("cannot create a work directory in {}: {}", under.string(), std::strerror(errno))};
  }
  WorkDir made(name, true);
  // Without /proc there is no note, and the directory is never taken for abandoned.
  if (auto me = this_process()) {
    if (auto s = write_file_atomically(made.path() / kWorkDirOwnerFile, me->to_text()); !s) return s.error();
  }
  return made;
}

Status WorkDir::open(const fs::path& given, const std::string& prefix) {
  if (!given.empty()) {
    *this = WorkDir(given, false);
    return {};
  }
  auto made = create(prefix);
  if (!made) return made.error();
  *this = std::move(*made);
  return {};
}

Status WorkDir::keep_as(const fs::path& final_path) {
  if (!owned_ || path_.empty()) return Error{ErrorCode::kInvalidArgument, "only a made work directory can be kept"};
  std::error_code ec;
  fs::remove(path_ / kWorkDirOwnerFile, ec);
  // Every file's data on disk before the name that publishes them appears.
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", path_.string(), ec.message())};
  if (fs::exists(fs::symlink_status(final_path, ec))) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: already there; nothing was replaced", final_path.string())};
  }
  if (::rename(path_.c_str(), final_path.c_str()) != 0) {
    return Error{ErrorCode::kIo, fmt::format("cannot rename {} to {}: {}", path_.string(), final_path.string(), std::strerror(errno))};
  }
  const fs::path parent = final_path.has_parent_path() ? final_path.parent_path() : fs::path(".");
  if (const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  untrack_work_dir(path_);
  path_ = final_path;
  owned_ = false;
  return {};
}

WorkDir::WorkDir(fs::path path, bool owned) : path_(std::move(path)), owned_(owned) {
  if (owned_) track_work_dir(path_);
}

WorkDir::WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)), owned_(other.owned_) {
  other.path_.clear();
  other.owned_ = false;
}

WorkDir& WorkDir::operator=(WorkDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    owned_ = other.owned_;
    other.path_.clear();
    other.owned_ = false;
  }
  return *this;
}

WorkDir::~WorkDir() { remove(); }

void WorkDir::remove() {
  if (!owned_ || path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  untrack_work_dir(path_);
  owned_ = false;
}

}  // namespace rung
