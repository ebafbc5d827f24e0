#include "os/machine.h"

#include <fmt/format.h>
#include <sys/utsname.h>

namespace rung {

std::string machine_architecture() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
}

std::string system_description() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return fmt::format("{} {} {}", u.sysname, u.release, u.machine);
}

const char* built_for_system() {
#if defined(__APPLE__)
  return "macos";
#elif defined(_WIN32)
  return "windows";
#else
  return "linux";
#endif
}

}  // namespace rung
