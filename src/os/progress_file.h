// Runs done so far, for a parent's progress line: one fixed-width line
// rewritten in place, written outside the timed region and at most every
// 100 ms, so the measurement does not pay for it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

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
  // The line at offset 0, whole (os/posix/progress_file.cpp, os/windows/progress_file.cpp).
  void write_line(const std::string& line);
  std::intptr_t file_ = -1;  // a descriptor, or a HANDLE's bits; -1 for none
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace rung
