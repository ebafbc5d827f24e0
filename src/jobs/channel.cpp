#include "jobs/channel.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "jobs/parity_protocol.h"
#include "os/child_environment.h"

namespace rung {
namespace {

std::string log_tail(const std::filesystem::path& log, std::size_t lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) all.push_back(line);
  }
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "\n    " + all[i];
  return out;
}

}  // namespace

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::start(const std::filesystem::path& worker, const std::filesystem::path& job,
                                                            const std::filesystem::path& log, const std::string& command) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Error{ErrorCode::kIo, fmt::format("socketpair failed: {}", std::strerror(errno))};
  }
  // dup2 onto the same number would keep close-on-exec set: move the child's end out of the way first.
  if (sv[1] == kParityChannelFd) {
    const int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, kParityChannelFd + 1);
    close(sv[1]);
    sv[1] = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, sv[1], kParityChannelFd);
  std::vector<std::string> args{worker.string(), command, job.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ChildEnvironment env;
  const int rc = posix_spawn(&pid, worker.c_str(), &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    return Error{ErrorCode::kNotFound, fmt::format("{}: cannot be started: {}", worker.string(), std::strerror(rc))};
  }
  return std::unique_ptr<WorkerProcess>(new WorkerProcess(pid, sv[0], log));
}

WorkerProcess::~WorkerProcess() {
  if (fd_ >= 0) close(fd_);
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

Status WorkerProcess::send(const std::string& line) {
  std::string data = line + "\n";
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{ErrorCode::kRuntime, ended("stopped taking work")};
    sent += static_cast<std::size_t>(n);
  }
  return {};
}

Result<std::string> WorkerProcess::receive(std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(pid_, SIGKILL);
      return Error{ErrorCode::kRuntime, ended(fmt::format("did not answer within {:.0f} s and was killed", static_cast<double>(deadline.count()) / 1000))};
    }
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{ErrorCode::kRuntime, ended("ended without answering")};
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void WorkerProcess::finish(std::chrono::milliseconds deadline) {
  if (fd_ >= 0) {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    fd_ = -1;
  }
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!reaped_ && std::chrono::steady_clock::now() < until) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      reaped_ = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

bool WorkerProcess::exited(std::string* how) {
  if (reaped_) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  reaped_ = true;
  if (how != nullptr) {
    if (WIFSIGNALED(status)) {
      const char* abbrev = sigabbrev_np(WTERMSIG(status));
      *how = abbrev != nullptr ? fmt::format("was killed by SIG{}", abbrev) : fmt::format("was killed by signal {}", WTERMSIG(status));
    } else {
      *how = fmt::format("exited with status {}", WEXITSTATUS(status));
    }
  }
  return true;
}

std::string WorkerProcess::ended(const std::string& what) {
  int status = 0;
  std::string how = "is still running";
  if (!reaped_ && waitpid(pid_, &status, 0) == pid_) {
    reaped_ = true;
    if (WIFSIGNALED(status)) {
      const char* abbrev = sigabbrev_np(WTERMSIG(status));
      how = abbrev != nullptr ? fmt::format("was killed by SIG{}", abbrev) : fmt::format("was killed by signal {}", WTERMSIG(status));
    } else if (WIFEXITED(status)) {
      how = fmt::format("exited with status {}", WEXITSTATUS(status));
    }
  }
  const std::string tail = log_tail(log_, 5);
  return fmt::format("the worker {} ({}){}", what, how, tail.empty() ? "" : fmt::format("; the last lines of {}:{}", log_.string(), tail));
}

bool ChannelToParent::send(const std::string& line) {
  const std::string data = line + "\n";
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

bool ChannelToParent::receive(std::string& line) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace rung
