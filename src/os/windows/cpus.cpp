#include "rung/cpus.h"

#include <windows.h>

#include <bitset>

namespace rung {

// The processors this process's affinity allows (within its processor group), at least 1.
int usable_cpus() {
  DWORD_PTR process = 0, system = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system) && process != 0) {
    return static_cast<int>(std::bitset<sizeof(DWORD_PTR) * 8>(process).count());
  }
  return 1;
}

}  // namespace rung
