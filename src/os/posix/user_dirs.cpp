// POSIX: the XDG directories, $HOME, or a checked private directory under the temporary root.
#include "rung/user_dirs.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "os/environment.h"
#include "os/work_dir.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// HOME when it can hold our directories; else why not, for the message.
Result<fs::path> usable_home() {
  const auto home_variable = system_variable("HOME");
  if (!home_variable) return Error{ErrorCode::kNotFound, "HOME is not set"};
  const char* home = home_variable->c_str();
  const fs::path dir(home);
  if (!dir.is_absolute()) return Error{ErrorCode::kInvalidArgument, fmt::format("HOME={} is not an absolute path", home)};
  struct stat st {};
  if (::stat(home, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error{ErrorCode::kNotFound, fmt::format("HOME={} is not a directory", home)};
  }
  if (::access(home, W_OK | X_OK) != 0) return Error{ErrorCode::kPermission, fmt::format("HOME={} is not writable by you", home)};
  return dir;
}

// <tmp>/rung-<uid>, made 0700 when missing, and refused unless it is this
// user's own directory that no one else can write to. lstat: a link planted
// under the name is refused, never followed.
Result<fs::path> private_directory() {
  const uid_t uid = ::geteuid();
  const fs::path dir = temporary_root() / fmt::format("rung-{}", uid);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error{ErrorCode::kIo, fmt::format("{} cannot be made: {}", dir.string(), std::strerror(errno))};
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return Error{ErrorCode::kIo, fmt::format("{}: {}", dir.string(), std::strerror(errno))};
  if (S_ISLNK(st.st_mode)) return Error{ErrorCode::kPermission, fmt::format("{} is a symbolic link, not a directory", dir.string())};
  if (!S_ISDIR(st.st_mode)) return Error{ErrorCode::kPermission, fmt::format("{} is not a directory", dir.string())};
  if (st.st_uid != uid) {
    return Error{ErrorCode::kPermission, fmt::format("{} is owned by uid {}, not by you (uid {})", dir.string(), st.st_uid, uid)};
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Error{ErrorCode::kPermission, fmt::format("{} is writable by other users (mode {:o})", dir.string(), st.st_mode & 07777)};
  }
  return dir;
}

Result<fs::path> user_dir(const char* xdg_variable, const fs::path& under_home, const char* private_sub) {
  if (const auto xdg = system_variable(xdg_variable); xdg && xdg->front() == '/') return fs::path(*xdg) / "rung";
  auto home = usable_home();
  if (home) return *home / under_home / "rung";
  auto own = private_directory();
  if (own) return *own / private_sub;
  return Error{ErrorCode::kInvalidArgument, fmt::format("{}, and the private fallback cannot be used: {}; set {} or HOME", home.error().message,
                                                        own.error().message, xdg_variable)};
}

}  // namespace

Result<fs::path> user_cache_dir() { return user_dir("XDG_CACHE_HOME", ".cache", "cache"); }

Result<fs::path> user_data_dir() { return user_dir("XDG_DATA_HOME", fs::path(".local") / "share", "data"); }

}  // namespace rung
