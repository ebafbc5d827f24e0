// A HANDLE kept in a neutral header's std::intptr_t (os/opened_file.h,
// os/file_lock.h), and back (INVALID_HANDLE_VALUE's bits are -1); a HANDLE
// closed with its holder; and when a process began, which with its id names it.
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

// When a process began, in FILETIME ticks (100 ns since 1601, an absolute
// instant); 0 when it cannot be told.
inline std::uint64_t creation_of(HANDLE process) {
  FILETIME created{}, exited{}, kernel{}, user{};
  if (!GetProcessTimes(process, &created, &exited, &kernel, &user)) return 0;
  return (static_cast<std::uint64_t>(created.dwHighDateTime) << 32) | created.dwLowDateTime;
}

}  // namespace rung
