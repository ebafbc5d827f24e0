// Runs done so far, for a parent's progress line: one fixed-width line
// rewritten in place, written outside the timed region and at most every
// 100 ms, so the measurement does not pay for it.
#pragma once

#include <chrono>
#include <filesystem>

namespace rung {

class ProgressFile {
 public:
  // No file (and nothing written) when `path` is empty or cannot be opened.
  explicit ProgressFile(const std::filesystem::path& path);
  ~ProgressFile();
  ProgressFile(const ProgressFile&) = delete;
  ProgressFile& operator=(const ProgressFile&) = delete;

  // "DONE TOTAL", unless the last line went out under 100 ms ago (`force` writes it all the same).
  void update(int done, int total, bool force = false);

 private:
  int fd_ = -1;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace rung
