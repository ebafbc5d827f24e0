#include "os/machine.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

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

std::uint64_t physical_memory_mib() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) >> 20;
}

std::string device_node(const std::string& name) { return "/dev/" + name; }

}  // namespace rung
