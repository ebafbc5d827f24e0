#include "os/path_trust.h"

#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <string>

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's ELOOP limit

std::string user_name(uid_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) return fmt::format("user {} (uid {})", pw.pw_name, uid);
  return fmt::format("uid {}", uid);
}

// One component, as lstat saw it.
Status check_component(const std::string& component, const struct stat& st) {
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    return Error{ErrorCode::kPermission,
                 fmt::format("{} is owned by {}, not by you or root", component, user_name(st.st_uid))};
  }
  const bool shared_sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if (!S_ISLNK(st.st_mode) && !shared_sticky_dir && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Error{ErrorCode::kPermission, fmt::format("{} is writable by other users (mode {:o})", component, st.st_mode & 07777)};
  }
  return {};
}

void push_front_components(std::deque<std::string>& todo, const fs::path& p) {
  std::deque<std::string> parts;
  for (const auto& c : p.relative_path()) parts.push_back(c.string());
  todo.insert(todo.begin(), parts.begin(), parts.end());
}

std::string joined(const std::string& dir, const std::string& name) { return dir == "/" ? "/" + name : dir + "/" + name; }

}  // namespace

Status check_path_trusted(const fs::path& path) {
  if (!path.is_absolute()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: not an absolute path", path.string())};
  }
  struct stat st {};
  if (::lstat("/", &st) != 0) return Error{ErrorCode::kIo, fmt::format("/: {}", std::strerror(errno))};
  RUNG_RETURN_IF_ERROR(check_component("/", st));

  std::deque<std::string> todo;
  push_front_components(todo, path);
  std::string current = "/";
  int links = 0;
  while (!todo.empty()) {
    const std::string name = todo.front();
    todo.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {  // the directory above was passed through, and checked, on the way down
      current = fs::path(current).parent_path().string();
      continue;
    }
    const std::string next = joined(current, name);
    if (::lstat(next.c_str(), &st) != 0) {
      return Error{errno == ENOENT || errno == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kIo,
                   fmt::format("{}: {}", next, std::strerror(errno))};
    }
    RUNG_RETURN_IF_ERROR(check_component(next, st));
    if (!S_ISLNK(st.st_mode)) {
      current = next;
      continue;
    }
    if (++links > kMaxLinks) return Error{ErrorCode::kIo, fmt::format("{}: too many symbolic links", path.string())};
    std::error_code ec;
    const fs::path target = fs::read_symlink(next, ec);
    if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", next, ec.message())};
    if (target.is_absolute()) current = "/";
    push_front_components(todo, target);
  }
  return {};
}

}  // namespace rung
