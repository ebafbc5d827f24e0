// A time in milliseconds as bench's reports show it: three or four significant
// figures, one decimal from 100 ms, four below 1 ms.
#pragma once

#include <fmt/format.h>

#include <string>

namespace rung {

inline std::string ms_text(double v) {
  return v >= 100 ? fmt::format("{:.1f}", v) : v >= 1 ? fmt::format("{:.2f}", v) : fmt::format("{:.4f}", v);
}

}  // namespace rung
