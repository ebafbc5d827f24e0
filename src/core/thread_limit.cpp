#include "core/thread_limit.h"

#include <fmt/format.h>

#include "rung/cpus.h"

namespace rung {

Status check_thread_count(int threads, std::string_view option) {
  const int cpus = usable_cpus();
  if (threads >= 0 && threads <= cpus) return {};
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{} {} is out of range: this machine gives rung {} logical CPU{}, so 0 (the default) to {}", option, threads, cpus,
                           cpus == 1 ? "" : "s", cpus)};
}

}  // namespace rung
