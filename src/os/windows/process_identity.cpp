// Windows: a process's creation time is an absolute instant (100 ns units since
// 1601), so a pid with its creation time names one process across boots; the
// "boot" is the system's and the "namespace" is the logon session the pid lives in.
#include <windows.h>

#include <fmt/format.h>

#include "os/process_identity.h"
#include "os/this_process.h"
#include "os/windows/handle.h"

namespace rung {
namespace {

std::string session_of(DWORD pid) {
  DWORD session = 0;
  if (!ProcessIdToSessionId(pid, &session)) return "";
  return fmt::format("session:{}", session);
}

}  // namespace

std::optional<ProcessIdentity> this_process() {
  const DWORD pid = GetCurrentProcessId();
  ProcessIdentity p{static_cast<long>(pid), creation_of(GetCurrentProcess()), "windows", host_name(), session_of(pid)};
  if (p.start_ticks == 0 || p.pid_namespace.empty()) return std::nullopt;
  return p;
}

bool process_has_ended(const ProcessIdentity& process) {
  const auto me = this_process();
  if (!me || process.host != me->host || process.boot_id != me->boot_id || process.pid <= 0) return false;
  OwnedHandle h(OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(process.pid)));
  if (!h.ok()) return GetLastError() == ERROR_INVALID_PARAMETER;  // no such process; access denied says nothing
  DWORD code = 0;
  if (GetExitCodeProcess(h.h, &code) && code != STILL_ACTIVE) return true;
  const std::uint64_t began = creation_of(h.h);
  return began != 0 && began != process.start_ticks;
}

}  // namespace rung
