// A HANDLE kept in a neutral header's std::intptr_t (os/opened_file.h,
// os/file_lock.h), and back. INVALID_HANDLE_VALUE's bits are -1.
#pragma once

#include <windows.h>

#include <cstdint>

namespace rung {

inline HANDLE handle_of(std::intptr_t bits) { return reinterpret_cast<HANDLE>(bits); }
inline std::intptr_t bits_of(HANDLE handle) { return reinterpret_cast<std::intptr_t>(handle); }

}  // namespace rung
