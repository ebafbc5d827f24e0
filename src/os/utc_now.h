// The time now, as records write it.
#pragma once

#include <string>

namespace rung {

// "2026-11-30T08:15:00Z"
std::string utc_now();

}  // namespace rung
