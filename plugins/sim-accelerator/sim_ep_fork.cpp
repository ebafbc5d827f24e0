// fork_at's child: a real fork, for the one thing only a fork shows (a process a
// provider leaves behind, holding whatever its parent had open). The simulated
// accelerator is a test plugin ONNX Runtime loads, not rung; tools/check-os.py
// allows this file its system calls.
#include "sim_ep_knobs.h"

#if defined(_WIN32)

namespace rung::sim_ep {
long leave_a_child_behind() { return 0; }
}  // namespace rung::sim_ep

#else

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace rung::sim_ep {

long leave_a_child_behind() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::signal(SIGTERM, SIG_IGN);
    std::this_thread::sleep_for(std::chrono::minutes(10));
    std::_Exit(0);
  }
  return pid > 0 ? static_cast<long>(pid) : 0;
}

}  // namespace rung::sim_ep

#endif
