// A regular file open for reading: the one primitive under os/read_file.h and
// os/file_hash.h, one implementation per system (os/posix/opened_file.cpp,
// os/windows/opened_file.cpp). The type is checked on the open file, before any
// read, and opening never waits: a FIFO or named pipe, a device or a directory is
// refused as what it is, so nothing blocks on it or reads it forever.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "rung/result.h"

namespace rung {

class OpenedFile {
 public:
  // The file, or why not, naming it: "<path>: does not exist" (kNotFound), "<path>:
  // is a FIFO, not a file" (kInvalidArgument), "<path>: cannot be read: <the system's words>" (kIo).
  static Result<OpenedFile> open(const std::filesystem::path& path);

  OpenedFile(OpenedFile&& other) noexcept : handle_(other.handle_), size_(other.size_), where_(std::move(other.where_)) {
    other.handle_ = kClosed;
  }
  OpenedFile& operator=(OpenedFile&&) = delete;
  OpenedFile(const OpenedFile&) = delete;
  ~OpenedFile();

  std::uint64_t size() const { return size_; }     // as the system stated it when opened
  const std::string& where() const { return where_; }  // the path, for messages

  // Up to `length` bytes at `offset` into `into`: how many were read, 0 at the end.
  Result<std::size_t> read_at(void* into, std::size_t length, std::uint64_t offset) const;
  // The next bytes from where the last read_next ended: for a pseudo-file whose
  // stated size means nothing (procfs), read to its end.
  Result<std::size_t> read_next(void* into, std::size_t length);

 private:
  OpenedFile(std::intptr_t handle, std::uint64_t size, std::string where) : handle_(handle), size_(size), where_(std::move(where)) {}
  std::intptr_t handle_;  // the system's: a descriptor, or a HANDLE's bits; kClosed once moved from (INVALID_HANDLE_VALUE's bits too)
  std::uint64_t size_;
  std::string where_;
  static constexpr std::intptr_t kClosed = -1;
};

}  // namespace rung
