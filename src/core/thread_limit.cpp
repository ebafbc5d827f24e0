#include "core/thread_limit.h"

#include <fmt/format.h>

#include "rung/cpus.h"
#include "rung/limits.h"

namespace rung {

Status check_thread_count(int threads, std::string_view option) {
  const int cpus = usable_cpus();
  if (threads >= 0 && threads <= cpus) return {};
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{} {} is out of range: this machine gives rung {} logical CPU{}, so 0 (the default) to {}", option, threads, cpus,
                           cpus == 1 ? "" : "s", cpus)};
}

Status check_deadline(std::chrono::milliseconds deadline, std::string_view what) {
  if (deadline >= kMinDeadline && deadline <= kMaxDeadline) return {};
  return Error{ErrorCode::kInvalidArgument, fmt::format("{} of {} ms is out of range: {} ms to {} ms (a day)", what, deadline.count(),
                                                        kMinDeadline.count(), kMaxDeadline.count())};
}

}  // namespace rung
