#include "os/progress_file.h"

#include <fmt/format.h>

namespace rung {

void ProgressFile::update(int done, int total, bool force) {
  if (file_ == -1) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string line = fmt::format("{} {}\n", done, total);
  line.resize(32, ' ');  // fixed width: a reader never sees the tail of a longer earlier line
  write_line(line);
}

}  // namespace rung
