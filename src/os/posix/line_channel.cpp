// POSIX: a socket pair; a read waits with poll.
#include "os/line_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rung {

bool LineChannel::send(const std::string& line) {
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

LineChannel::Read LineChannel::read_more(std::optional<std::chrono::steady_clock::time_point> until) {
  for (;;) {
    if (until) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*until - std::chrono::steady_clock::now()).count();
      if (left <= 0) return Read::kTimedOut;
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (r <= 0) continue;  // EINTR, or no data yet: look at the clock again
    }
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::kClosed;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return Read::kLine;
  }
}

Result<ChannelEnds> open_channel_pair() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Error{ErrorCode::kIo, fmt::format("socketpair failed: {}", std::strerror(errno))};
  }
  return ChannelEnds{sv[0], sv[1], kChannelFd};
}

void close_channel_end(int end) {
  if (end >= 0) ::close(end);
}

void LineChannel::close() {
  if (fd_ < 0) return;
  shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace rung
