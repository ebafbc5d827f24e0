// POSIX: stat, which follows links as opening the file would.
#include "os/file_identity.h"

#include <sys/stat.h>

namespace rung {

bool identity_of(const std::filesystem::path& file, FileIdentity& id) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return false;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::uint64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  id.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  return true;
}

}  // namespace rung
