#include "os/termination.h"

#include "os/posix/children.h"
#include "os/termination_state.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace rung {
namespace fs = std::filesystem;
namespace {

// Never destroyed: the signal thread may use it during exit.
std::vector<pid_t>& children() {
  static auto* pids = new std::vector<pid_t>;
  return *pids;
}

// Waits, without reaping it (its owner does), until a killed child is gone.
void wait_until_dead(pid_t pid) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  siginfo_t info{};
  while (std::chrono::steady_clock::now() < until) {
    info.si_pid = 0;
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

[[noreturn]] void clean_up_and_end(int signal) {
  begin_termination();
  {
    std::lock_guard<std::mutex> lock(termination_mutex());
    for (pid_t pid : children()) kill_child_group(pid);
    for (pid_t pid : children()) wait_until_dead(pid);
    remove_tracked_work_dirs();
  }
  // End the way the signal would have ended us, so our parent sees it.
  ::signal(signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::kill(::getpid(), signal);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ::_exit(128 + signal);
}

}  // namespace

sigset_t termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

void end_cleanly_on_termination_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    const sigset_t set = termination_signals();
    // A thread that reaches exit() while the cleanup runs (its worker just
    // died) waits for the signal instead of ending with a status.
    std::atexit([] {
      while (termination_begun()) ::pause();
    });
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);  // every thread started from here on inherits the mask
    std::thread([set] {
      int signal = 0;
      while (::sigwait(&set, &signal) != 0) {
      }
      clean_up_and_end(signal);
    }).detach();
  });
}

// A thread that starts a child or makes a work directory while the cleanup
// runs (its last worker was just killed, it moved on to the next) would leave
// that one behind: it is undone here, and the thread waits for the end.
void park_until_the_end() {
  for (;;) ::pause();
}

void kill_child_group(pid_t pid) {
  ::kill(-pid, SIGKILL);  // the group it leads: what it started too
  ::kill(pid, SIGKILL);
}

void track_child(pid_t pid) {
  {
    std::lock_guard<std::mutex> lock(termination_mutex());
    if (!termination_begun()) {
      children().push_back(pid);
      return;
    }
    kill_child_group(pid);
  }
  park_until_the_end();
}

pid_t reap_child(pid_t pid, int* status, int options) {
  // Wait (outside the lock) until it has ended, or look whether it has, without reaping it.
  siginfo_t info{};
  const int look = WEXITED | WNOWAIT | ((options & WNOHANG) != 0 ? WNOHANG : 0);
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, look) != 0 && errno == EINTR) {
  }
  // Ended: whatever it started and left running (a provider's forked helper that
  // ignores SIGTERM) ends with it. Its zombie still holds the group's id, so the
  // id names no other process yet.
  if (info.si_pid == pid) ::kill(-pid, SIGKILL);
  std::lock_guard<std::mutex> lock(termination_mutex());
  pid_t done = 0;
  do {
    done = ::waitpid(pid, status, options | WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == pid || done < 0) {
    auto& v = children();
    v.erase(std::remove(v.begin(), v.end(), pid), v.end());
  }
  return done;
}

}  // namespace rung
