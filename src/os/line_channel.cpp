// What every system's channel shares: lines cut from what arrives. Each system's
// reads, sends and ends: os/posix/line_channel.cpp, os/windows/line_channel.cpp.
#include "os/line_channel.h"

namespace rung {

LineChannel::~LineChannel() { close(); }

LineChannel::Read LineChannel::receive(std::string& line, std::optional<std::chrono::steady_clock::time_point> until) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Read::kLine;
    }
    if (const Read more = read_more(until); more != Read::kLine) return more;
  }
}

}  // namespace rung
