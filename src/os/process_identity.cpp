// The record's text, the same on every system; who this process is comes from
// os/posix/process_identity.cpp or os/windows/process_identity.cpp.
#include "os/process_identity.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

namespace rung {

std::string ProcessIdentity::to_text() const {
  return fmt::format("pid {}\nstart {}\nboot {}\nhost {}\npidns {}\n", pid, start_ticks, boot_id, host, pid_namespace);
}

std::optional<ProcessIdentity> ProcessIdentity::parse(const std::string& text) {
  ProcessIdentity p;
  bool has_pid = false, has_start = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a note that went through a Windows text stream
    const auto space = line.find(' ');
    if (space == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, space), value = line.substr(space + 1);
    char* end = nullptr;
    if (key == "pid") {
      p.pid = std::strtol(value.c_str(), &end, 10);
      has_pid = end != value.c_str() && *end == '\0' && p.pid > 0;
    } else if (key == "start") {
      p.start_ticks = std::strtoull(value.c_str(), &end, 10);
      has_start = end != value.c_str() && *end == '\0';
    } else if (key == "boot") {
      p.boot_id = value;
    } else if (key == "host") {
      p.host = value;
    } else if (key == "pidns") {
      p.pid_namespace = value;
    } else {
      return std::nullopt;
    }
  }
  if (!has_pid || !has_start || p.boot_id.empty() || p.pid_namespace.empty()) return std::nullopt;
  return p;
}

}  // namespace rung
