#include "os/progress_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <string>

namespace rung {

ProgressFile::ProgressFile(const std::filesystem::path& path) {
  if (!path.empty()) fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

ProgressFile::~ProgressFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ProgressFile::update(int done, int total, bool force) {
  if (fd_ < 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string line = fmt::format("{} {}\n", done, total);
  line.resize(32, ' ');  // fixed width: a reader never sees the tail of a longer earlier line
  if (::pwrite(fd_, line.data(), line.size(), 0) < 0) return;
}

}  // namespace rung
