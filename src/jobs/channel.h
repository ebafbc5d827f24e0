// A long-lived worker process and the socket to it, one JSON object a line
// (parity sides: parity_protocol.h; conformance runs: conform_protocol.h). A
// worker that crashes or misses its deadline is reported with its exit status
// or signal and the last lines of its log, never propagated.
#pragma once

#include <fmt/format.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "os/read_file.h"
#include "rung/result.h"

namespace rung {

class WorkerProcess {
 public:
  // Starts `worker COMMAND JOB` (COMMAND: "parity", "conform") with the socket on
  // kParityChannelFd; stdout and stderr go to `log`.
  static Result<std::unique_ptr<WorkerProcess>> start(const std::filesystem::path& worker, const std::filesystem::path& job,
                                                      const std::filesystem::path& log, const std::string& command = "parity");
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Status send(const std::string& line);
  // Whether the worker has exited (reaping it if so), and how: "was killed by SIGSEGV".
  bool exited(std::string* how = nullptr);
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

// The worker's end of the socket.
class ChannelToParent {
 public:
  explicit ChannelToParent(int fd) : fd_(fd) {}
  bool send(const std::string& line);  // false when the parent has gone
  bool send(const nlohmann::json& j) { return send(j.dump()); }
  // The next line; false when the parent closed the socket.
  bool receive(std::string& line);

 private:
  int fd_;
  std::string buffer_;
};

// A socket worker's main (`rung-probe-worker COMMAND JOB.json`): the job file
// read and parsed, then served over the socket descriptor the job names.
// Exits 2 on a wrong command line or a malformed job.
template <class Job>
int socket_worker_main(int argc, char** argv, const char* usage, Result<Job> (*parse)(const std::string&),
                       int (*serve)(const Job&, ChannelToParent&)) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {}\n", usage);
    return 2;
  }
  auto job = parse(read_text_file(argv[1]));
  if (!job) {
    fmt::print(stderr, "{}: {}\n", argv[1], job.error().message);
    return 2;
  }
  ChannelToParent channel(job->channel_fd);
  return serve(*job, channel);
}

}  // namespace rung
