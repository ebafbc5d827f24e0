// Windows: Ctrl-C, Ctrl-Break and the console's closing reach a handler thread
// the system starts. The children need nothing here: each is in a Job Object
// that kills it when this process ends (os/windows/child_process.cpp). The work
// directories made are removed, then the process ends with STATUS_CONTROL_C_EXIT,
// as one the console stopped, without running exit handlers that could wait on a
// thread the handler interrupted.
#include <windows.h>

#include <mutex>

#include "os/termination.h"
#include "os/termination_state.h"
#include "rung/termination.h"

namespace rung {
namespace {

constexpr UINT kStoppedByConsole = 0xC000013A;  // STATUS_CONTROL_C_EXIT

BOOL WINAPI on_console_event(DWORD event) {
  switch (event) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
    case CTRL_CLOSE_EVENT:
    case CTRL_LOGOFF_EVENT:
    case CTRL_SHUTDOWN_EVENT:
      break;
    default:
      return FALSE;
  }
  begin_termination();
  {
    std::lock_guard<std::mutex> lock(termination_mutex());
    remove_tracked_work_dirs();
  }
  TerminateProcess(GetCurrentProcess(), kStoppedByConsole);
  return TRUE;
}

}  // namespace

void end_cleanly_on_termination_signals() {
  static std::once_flag once;
  std::call_once(once, [] { SetConsoleCtrlHandler(on_console_event, TRUE); });
}

void park_until_the_end() {
  for (;;) Sleep(INFINITE);
}

}  // namespace rung
