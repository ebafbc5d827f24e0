#include "os/work_dir.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "os/path_trust.h"
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

Result<WorkDir> WorkDir::create(const std::string& prefix, const fs::path& parent) {
  const fs::path under = parent.empty() ? temporary_root() : parent;
  std::string name = (under / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    return Error{ErrorCode::kIo, fmt::format("cannot create a work directory in {}: {}", under.string(), std::strerror(errno))};
  }
  return WorkDir(name, true);
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
