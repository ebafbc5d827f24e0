#include "os/work_dir.h"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>

#include "os/atomic_file.h"
#include "os/environment.h"
#include "os/fresh_dir.h"
#include "os/path_trust.h"
#include "os/process_identity.h"
#include "os/termination.h"
#include "rung/directory.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;

fs::path temporary_root() {
  if (auto env = system_variable("TMPDIR")) {
    const fs::path dir = path_from_utf8(*env);
    std::error_code ec;
    if (dir.is_absolute() && fs::is_directory(dir, ec) && check_path_trusted(dir)) return dir;
  }
  return system_temporary_root();
}

namespace {

// NAME.XXXXXX, as mkdtemp names them.
bool named_as_made(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot != std::string::npos && dot > 0 && name.size() - dot - 1 == 6;
}

// The maker named by a work directory's note, when the directory and the note
// are this user's own (a link is never followed) and the note is whole.
std::optional<ProcessIdentity> maker_of(const fs::path& dir) {
  auto text = read_own_note(dir, kWorkDirOwnerFile, 1024);
  if (!text) return std::nullopt;
  return ProcessIdentity::parse(*text);
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
  auto entries = list_directory(parent);
  if (!entries) return 0;
  for (const auto& e : *entries) {
    if (!named_as_made(e.filename().string())) continue;
    auto maker = maker_of(e);
    if (!maker || !process_has_ended(*maker)) continue;
    std::error_code rm;
    remove_tree(e, rm);  // removes links inside, never what they point to
    if (!rm) ++removed;
  }
  return removed;
}

Result<WorkDir> WorkDir::create(const std::string& prefix, const fs::path& parent) {
  const fs::path under = parent.empty() ? temporary_root() : parent;
  if (first_visit(under)) remove_abandoned_work_dirs(under);
  auto name = make_fresh_dir(under, prefix);
  if (!name) return name.error();
  WorkDir made(*name, true);
  // Without /proc there is no note, and the directory is never taken for abandoned.
  if (auto me = this_process()) {
    RUNG_RETURN_IF_ERROR(write_file_atomically(made.path() / kWorkDirOwnerFile, me->to_text()));
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
  RUNG_RETURN_IF_ERROR(sync_and_rename_dir(path_, final_path));
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
  remove_tree(path_, ec);
  untrack_work_dir(path_);
  owned_ = false;
}

}  // namespace rung
