// POSIX: /proc (the start time in clock ticks, the boot id, the pid namespace).
#include "os/process_identity.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "os/read_file.h"
#include "os/this_process.h"

namespace rung {
namespace {

// A /proc file: its size says 0, so it is read to its end (a few hundred bytes at most).
std::optional<std::string> read_proc_file(const std::string& path) { return read_system_file(path, 4096); }

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

struct StatLine {
  char state = '?';
  unsigned long long start_ticks = 0;
};

// /proc/PID/stat: "PID (COMM) STATE PPID ..." where COMM may hold spaces and
// parentheses, so the fields are counted after the last ')'; starttime is the 22nd.
std::optional<StatLine> read_stat(const std::string& pid) {
  auto text = read_proc_file("/proc/" + pid + "/stat");
  if (!text) return std::nullopt;
  const auto close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text->substr(close + 1));
  std::vector<std::string> f;
  for (std::string w; fields >> w;) f.push_back(w);
  if (f.size() < 20 || f[0].size() != 1) return std::nullopt;
  StatLine s;
  s.state = f[0][0];
  char* end = nullptr;
  s.start_ticks = std::strtoull(f[19].c_str(), &end, 10);
  if (end == f[19].c_str() || *end != '\0') return std::nullopt;
  return s;
}

std::string boot_id() { return first_line(read_proc_file("/proc/sys/kernel/random/boot_id").value_or("")); }

std::string pid_namespace() {
  char link[256] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);
  return n > 0 ? std::string(link, static_cast<std::size_t>(n)) : "";
}

}  // namespace

std::optional<ProcessIdentity> this_process() {
  // The main thread's stat, not /proc/self/stat: qemu's user-mode emulation answers
  // /proc/self/stat itself with a start time of its own, which another process
  // reading /proc/PID/stat never sees (it would take every emulated process's work
  // directory for abandoned). For the main thread, starttime is the process's.
  auto stat = read_stat("self/task/" + std::to_string(::getpid()));
  ProcessIdentity p{static_cast<long>(::getpid()), 0, boot_id(), host_name(), pid_namespace()};
  if (!stat || p.boot_id.empty() || p.pid_namespace.empty()) return std::nullopt;
  p.start_ticks = stat->start_ticks;
  return p;
}

bool process_has_ended(const ProcessIdentity& process) {
  const auto me = this_process();
  // Another machine (a shared home), another boot or another pid namespace: its pids mean nothing here.
  if (!me || process.host != me->host || process.boot_id != me->boot_id || process.pid_namespace != me->pid_namespace) return false;
  const std::string dir = "/proc/" + std::to_string(process.pid);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return errno == ENOENT;
  const auto stat = read_stat(std::to_string(process.pid));
  if (!stat) return false;
  if (stat->state == 'Z' || stat->state == 'X') return true;  // killed, not yet reaped by its parent
  return stat->start_ticks != process.start_ticks;
}

}  // namespace rung
