// A parity worker process and the socket to it (see parity_protocol.h). A
// worker that crashes or misses its deadline is reported with its exit status
// or signal and the last lines of its log, never propagated.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "rung/result.h"

namespace rung {

class WorkerProcess {
 public:
  // Starts `worker parity JOB` with the socket on kParityChannelFd; stdout and stderr go to `log`.
  static Result<std::unique_ptr<WorkerProcess>> start(const std::filesystem::path& worker, const std::filesystem::path& job,
                                                      const std::filesystem::path& log);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Status send(const std::string& line);
  // The next line from the worker, waiting at most `deadline`.
  Result<std::string> receive(std::chrono::milliseconds deadline);
  // Closes the socket and waits (up to `deadline`) for the worker to exit.
  void finish(std::chrono::milliseconds deadline);

 private:
  WorkerProcess(pid_t pid, int fd, std::filesystem::path log) : pid_(pid), fd_(fd), log_(std::move(log)) {}
  std::string ended(const std::string& what);  // reaps the worker and says how it ended
  pid_t pid_;
  int fd_;
  std::filesystem::path log_;
  std::string buffer_;
  bool reaped_ = false;
};

}  // namespace rung
