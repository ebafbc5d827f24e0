// A HANDLE kept in a neutral header's std::intptr_t (os/opened_file.h,
// os/file_lock.h), and back (INVALID_HANDLE_VALUE's bits are -1); and a HANDLE
// closed with its holder.
#pragma once

#include <windows.h>

#include <cstdint>
#include <utility>

namespace rung {

inline HANDLE handle_of(std::intptr_t bits) { return reinterpret_cast<HANDLE>(bits); }
inline std::intptr_t bits_of(HANDLE handle) { return reinterpret_cast<std::intptr_t>(handle); }

// Closed when its holder goes. Null and INVALID_HANDLE_VALUE both mean none:
// the system's calls answer one or the other for a failure.
struct OwnedHandle {
  HANDLE h = nullptr;
  OwnedHandle() = default;
  explicit OwnedHandle(HANDLE handle) : h(handle) {}
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  ~OwnedHandle() { close(); }
  bool ok() const { return h != nullptr && h != INVALID_HANDLE_VALUE; }
  void close() {
    if (ok()) CloseHandle(h);
    h = nullptr;
  }
  HANDLE release() { return std::exchange(h, nullptr); }
};

}  // namespace rung
