// POSIX: posix_spawn with the termination signals unblocked and at their
// defaults, waitpid through the cleanup's record of children, SIGKILL.
#include "os/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "os/posix/children.h"
#include "os/termination.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include "os/child_environment.h"

namespace rung {

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

Result<ChildProcess> ChildProcess::spawn(const std::filesystem::path& program, const std::vector<std::string>& args,
                                         const std::filesystem::path& log_file, int pass_fd, int as_fd) {
  std::vector<std::string> argv_storage{program.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  // dup2 onto its own number would keep close-on-exec set: move it out of the way first.
  int moved = -1;
  if (pass_fd != -1 && pass_fd == as_fd) {
    moved = fcntl(pass_fd, F_DUPFD_CLOEXEC, as_fd + 1);
    if (moved < 0) return Error{ErrorCode::kIo, fmt::format("cannot pass descriptor {}: {}", pass_fd, std::strerror(errno))};
    pass_fd = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  if (pass_fd != -1) posix_spawn_file_actions_adddup2(&actions, pass_fd, as_fd);
  // The parent may block the termination signals (os/termination.h); the child gets them back, at their defaults.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  const sigset_t defaults = termination_signals();
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // Its own process group: a kill reaches whatever it started as well (a provider's helper processes).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  const auto start = Clock::now();
  pid_t pid = 0;
  ChildEnvironment env;
  std::vector<char*> envp;
  for (const auto& e : env.entries()) envp.push_back(const_cast<char*>(e.c_str()));  // posix_spawn's type; it copies them
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (moved >= 0) close(moved);
  if (rc != 0) return Error{ErrorCode::kNotFound, std::strerror(rc)};
  track_child(pid);
  return ChildProcess(pid, start);
}

ChildProcess::~ChildProcess() { (void)kill(); }

ChildExit ChildProcess::reaped(int status, bool timed_out) {
  pid_ = -1;
  exit_.timed_out = timed_out;
  exit_.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  if (!timed_out && WIFEXITED(status)) exit_.exit_code = WEXITSTATUS(status);
  if (!timed_out && WIFSIGNALED(status)) exit_.signal = WTERMSIG(status);
  return exit_;
}

ChildExit ChildProcess::wait(Clock::time_point until, const std::function<void()>& on_wait, std::chrono::milliseconds every) {
  auto next_call = Clock::now() + every;
  while (pid_ != -1) {
    int status = 0;
    const pid_t done = reap_child(static_cast<pid_t>(pid_), &status, WNOHANG);
    if (done == pid_) return reaped(status, false);
    if (done < 0 && errno != EINTR) {  // reaped elsewhere: how it ended is not known
      pid_ = -1;
      return exit_;
    }
    const auto now = Clock::now();
    if (now >= until) {
      kill_child_group(static_cast<pid_t>(pid_));
      reap_child(static_cast<pid_t>(pid_), &status, 0);
      return reaped(status, true);
    }
    if (on_wait && now >= next_call) {
      on_wait();
      next_call = now + every;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return exit_;
}

ChildExit ChildProcess::kill() {
  if (pid_ == -1) return exit_;
  int status = 0;
  // Before reaping: a child that already ended is a zombie until then, harmless to
  // signal, and its group id still names what it started.
  kill_child_group(static_cast<pid_t>(pid_));
  reap_child(static_cast<pid_t>(pid_), &status, 0);
  return reaped(status, false);
}

}  // namespace rung
