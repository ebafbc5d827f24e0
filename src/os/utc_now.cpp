#include "os/utc_now.h"

#include <fmt/chrono.h>

#include <ctime>

namespace rung {

std::string utc_now() {
  // fmt::gmtime is the thread-safe gmtime of each system (gmtime_r, gmtime_s).
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
}

}  // namespace rung
