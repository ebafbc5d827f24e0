// POSIX: a descriptor closed on exec, pwrite at offset 0.
#include "os/progress_file.h"

#include <fcntl.h>
#include <unistd.h>

namespace rung {

ProgressFile::ProgressFile(const std::filesystem::path& path) {
  if (!path.empty()) file_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file_ < 0) file_ = -1;
}

ProgressFile::~ProgressFile() {
  if (file_ != -1) ::close(static_cast<int>(file_));
}

void ProgressFile::write_line(const std::string& line) {
  if (::pwrite(static_cast<int>(file_), line.data(), line.size(), 0) < 0) return;
}

}  // namespace rung
