// For harnesses of readers that take a path: the fuzzer's input written to one
// file of this process (removed at exit), so the whole reading path runs.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace rung::fuzz {

// Writes data to /tmp/rung-fuzz-NAME-PID.EXT (the same file every call) and returns its path.
inline const std::string& write_scratch_file(const char* name, const char* ext, const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/rung-fuzz-" + std::string(name) + "-" + std::to_string(::getpid()) + "." + ext;
  static const int removed_at_exit = std::atexit([] { std::remove(path.c_str()); });
  (void)removed_at_exit;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace rung::fuzz
