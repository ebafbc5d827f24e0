// One end of a started job's channel: text lines both ways, one JSON object a
// line. The parent holds one end (jobs/runner.h), the worker the other. POSIX: a
// socket pair (os/posix/line_channel.cpp); Windows: a named pipe of one instance,
// overlapped, so a read can wait with a deadline (os/windows/line_channel.cpp).
// An end is an int: a descriptor, or a HANDLE's value (Windows keeps handles
// within 32 bits, so that 32-bit programs can share them).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "rung/result.h"

namespace rung {

// The descriptor a worker finds its end of the channel on, on POSIX.
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
  // Each system's: appends what arrives next to buffer_ (kLine: something did), or says why nothing will.
  Read read_more(std::optional<std::chrono::steady_clock::time_point> until);

  int fd_;
  std::string buffer_;
};

// A connected pair of channel ends, neither inherited by a child unless handed
// to it: the parent keeps `ours` (a LineChannel) and hands `theirs` to the child
// (ChildProcess::spawn(..., theirs, in_child)), tells it `in_child` (the worker's
// --channel=N), then closes its copy of `theirs` with close_channel_end.
struct ChannelEnds {
  int ours = -1;
  int theirs = -1;
  int in_child = -1;  // the number the child finds its end by: kChannelFd on POSIX; on Windows `theirs` itself (an inherited handle keeps its value)
};
Result<ChannelEnds> open_channel_pair();
void close_channel_end(int end);

}  // namespace rung
