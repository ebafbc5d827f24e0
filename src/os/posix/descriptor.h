// A descriptor kept in a neutral header's std::intptr_t (os/opened_file.h,
// os/file_lock.h), and back.
#pragma once

#include <cstdint>

namespace rung {

inline int descriptor_of(std::intptr_t handle) { return static_cast<int>(handle); }

}  // namespace rung
