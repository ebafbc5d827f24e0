// What every system's listing shares: a list is a visit that keeps each path.
// The visit itself is the system's (os/posix/, os/windows/directory.cpp).
#include "rung/directory.h"

namespace rung {

Result<std::vector<std::filesystem::path>> list_directory(const std::filesystem::path& dir, const Listing& how) {
  std::vector<std::filesystem::path> out;
  Status listed = visit_directory(dir, how, [&](const std::filesystem::path& p) {
    out.push_back(p);
    return true;
  });
  if (!listed) return listed.error();
  return out;
}

}  // namespace rung
