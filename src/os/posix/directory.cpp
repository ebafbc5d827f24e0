// POSIX: std::filesystem lists and removes correctly here (os/directory.h says
// why Windows has its own).
#include <fmt/format.h>

#include "rung/directory.h"

namespace rung {
namespace fs = std::filesystem;

Status visit_directory(const fs::path& dir, const Listing& how, const std::function<bool(const fs::path&)>& visit) {
  std::error_code ec;
  std::size_t seen = 0;
  if (!how.recursive) {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && seen < how.max_entries; it.increment(ec), ++seen) {
      if (!visit(it->path())) return {};
    }
  } else {
    const auto options = how.skip_unreadable ? fs::directory_options::skip_permission_denied : fs::directory_options::none;
    for (fs::recursive_directory_iterator it(dir, options, ec), end; !ec && it != end && seen < how.max_entries; it.increment(ec), ++seen) {
      if (!visit(it->path())) return {};
    }
  }
  if (ec) return Error{ErrorCode::kIo, fmt::format("cannot list {}: {}", dir.string(), ec.message())};
  return {};
}

std::uintmax_t remove_tree(const fs::path& path, std::error_code& ec) {
  ec.clear();
  const std::uintmax_t n = fs::remove_all(path, ec);
  return n == static_cast<std::uintmax_t>(-1) ? 0 : n;
}

}  // namespace rung
