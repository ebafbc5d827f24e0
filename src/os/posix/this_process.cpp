// POSIX (Linux): prctl for the parent-death signal, setpriority on the thread, getrusage, gethostname.
#include "os/this_process.h"
#include "rung/terminal.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rung {

long this_process_id() { return static_cast<long>(::getpid()); }

bool end_with_parent(long parent) {
  // The kernel sends SIGKILL when the parent goes; a parent that went before this
  // call is seen as a different parent now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  return static_cast<long>(::getppid()) == parent;
}

void crash_without_waiting() {}  // a fatal signal ends the process, and waitpid tells the parent which

void lower_this_thread_priority() {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

double peak_resident_kib() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss);  // KiB on Linux
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
  return buf;
}

}  // namespace rung
