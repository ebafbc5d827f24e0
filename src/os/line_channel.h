// One end of a started job's socket: text lines both ways, one JSON object a
// line. The parent holds one end (jobs/runner.h), the worker the other.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "rung/result.h"

namespace rung {

// The descriptor a worker finds its end of the channel on.
inline constexpr int kChannelFd = 3;

class LineChannel {
 public:
  explicit LineChannel(int fd) : fd_(fd) {}
  ~LineChannel();
  LineChannel(const LineChannel&) = delete;
  LineChannel& operator=(const LineChannel&) = delete;

  // False when the other end is gone.
  bool send(const std::string& line);

  enum class Read { kLine, kClosed, kTimedOut };
  // The next line (without its newline). Waits until `until`, or for as long as it takes.
  Read receive(std::string& line, std::optional<std::chrono::steady_clock::time_point> until = std::nullopt);

  // Shuts the socket down both ways and closes it: the other end reads the end.
  void close();

 private:
  int fd_;
  std::string buffer_;
};

// A connected pair of channel ends, both close-on-exec: the parent keeps `ours`
// (a LineChannel) and hands `theirs` to the child (ChildProcess::spawn's pass_fd),
// then closes its copy of it with close_channel_end.
struct ChannelEnds {
  int ours = -1;
  int theirs = -1;
};
Result<ChannelEnds> open_channel_pair();
void close_channel_end(int end);

}  // namespace rung
