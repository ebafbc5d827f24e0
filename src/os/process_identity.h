// Who a process is, written down so that a later process can tell whether it
// still runs: its pid alone is not enough (pids are reused), so the record
// holds its start time since boot, the boot, the host and the pid namespace.
// On Windows the start is the creation time (an absolute instant: the boot is
// "windows") and the namespace is the logon session (os/windows/process_identity.cpp).
#pragma once

#include <optional>
#include <string>

namespace rung {

struct ProcessIdentity {
  long pid = 0;
  unsigned long long start_ticks = 0;  // /proc/PID/stat's starttime: clock ticks after boot; Windows: 100 ns since 1601
  std::string boot_id;                 // /proc/sys/kernel/random/boot_id; "windows"
  std::string host;
  std::string pid_namespace;           // /proc/self/ns/pid's link text, "pid:[4026531836]"; "session:1"

  // One "key value" line each; parse() takes back what to_text() wrote, nothing else.
  std::string to_text() const;
  static std::optional<ProcessIdentity> parse(const std::string& text);
};

// This process; nothing when /proc cannot tell.
std::optional<ProcessIdentity> this_process();

// True only when it is sure that the process has ended: on this host, in this
// boot and pid namespace, its pid is gone, a zombie, or taken by a process
// started at another time. A process of another host (a shared home), boot or
// pid namespace is never called ended: its pid means nothing here.
bool process_has_ended(const ProcessIdentity& process);

}  // namespace rung
