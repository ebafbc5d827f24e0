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
  return WorkDir(name);
}

WorkDir::WorkDir(fs::path path) : path_(std::move(path)) { track_work_dir(path_); }

WorkDir::WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

WorkDir::~WorkDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  untrack_work_dir(path_);
}

}  // namespace rung
