#include "os/termination.h"

#include "os/posix/children.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace rung {
namespace fs = std::filesystem;
namespace {

struct Tracked {
  std::mutex mutex;
  std::vector<pid_t> children;
  std::vector<fs::path> work_dirs;
};

Tracked& tracked() {
  static Tracked* t = new Tracked;  // never destroyed: the signal thread may use it during exit
  return *t;
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

// Set while the cleanup runs: a thread that reaches exit() meanwhile (its
// worker just died) waits for the signal instead of ending with a status.
std::atomic<bool> ending{false};

[[noreturn]] void clean_up_and_end(int signal) {
  ending = true;
  Tracked& t = tracked();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    for (pid_t pid : t.children) ::kill(pid, SIGKILL);
    for (pid_t pid : t.children) wait_until_dead(pid);
    for (const auto& dir : t.work_dirs) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
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
    std::atexit([] {
      while (ending) ::pause();
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
[[noreturn]] static void park_until_the_end() {
  for (;;) ::pause();
}

void track_child(pid_t pid) {
  {
    std::lock_guard<std::mutex> lock(tracked().mutex);
    if (!ending) {
      tracked().children.push_back(pid);
      return;
    }
    ::kill(pid, SIGKILL);
  }
  park_until_the_end();
}

pid_t reap_child(pid_t pid, int* status, int options) {
  if ((options & WNOHANG) == 0) {
    // Wait outside the lock until it has ended, then reap under it.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
  }
  std::lock_guard<std::mutex> lock(tracked().mutex);
  pid_t done = 0;
  do {
    done = ::waitpid(pid, status, options | WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == pid || done < 0) {
    auto& v = tracked().children;
    v.erase(std::remove(v.begin(), v.end(), pid), v.end());
  }
  return done;
}

void track_work_dir(const fs::path& dir) {
  {
    std::lock_guard<std::mutex> lock(tracked().mutex);
    if (!ending) {
      tracked().work_dirs.push_back(dir);
      return;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  park_until_the_end();
}

void create_directories_unless_ending(const fs::path& dir, std::error_code& ec) {
  {
    std::lock_guard<std::mutex> lock(tracked().mutex);
    if (!ending) {
      fs::create_directories(dir, ec);
      return;
    }
  }
  park_until_the_end();
}

void untrack_work_dir(const fs::path& dir) {
  std::lock_guard<std::mutex> lock(tracked().mutex);
  auto& v = tracked().work_dirs;
  v.erase(std::remove(v.begin(), v.end(), dir), v.end());
}

}  // namespace rung
