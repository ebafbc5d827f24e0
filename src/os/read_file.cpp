#include "os/read_file.h"

#include <unistd.h>

#include <cerrno>

#include "os/regular_file.h"

namespace rung {

std::string read_text_file(const std::filesystem::path& path) {
  auto fd = open_regular_file(path);  // a FIFO or a device would never end
  if (!fd) return {};
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(*fd);
  return out;
}

}  // namespace rung
