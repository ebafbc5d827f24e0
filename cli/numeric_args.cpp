#include "numeric_args.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "rung/cpus.h"

namespace rung::cli {

CLI::Validator finite_within(double lo, double hi, const std::string& unit) {
  const std::string range = fmt::format("a finite number of {} from {:g} to {:g}", unit, lo, hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return fmt::format("'{}' is not a number; expected {}", text, range);
        if (!std::isfinite(v) || errno == ERANGE || v < lo || v > hi) return fmt::format("{} is out of range; expected {}", text, range);
        return {};
      },
      fmt::format("{:g}..{:g}", lo, hi));
}

CLI::Validator whole_within(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (end == text.c_str() || *end != '\0') return fmt::format("'{}' is not a whole number; expected {} to {}", text, lo, hi);
        if (errno == ERANGE || v < lo || v > hi) return fmt::format("{} is out of range; expected a whole number from {} to {}", text, lo, hi);
        return {};
      },
      fmt::format("{}..{}", lo, hi));
}

CLI::Validator thread_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const int cpus = usable_cpus();
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (end == text.c_str() || *end != '\0') return fmt::format("'{}' is not a whole number of threads", text);
        if (errno == ERANGE || v < 0 || v > cpus) {
          return fmt::format("{} threads is out of range: this machine gives rung {} logical CPU{}, so 0 (the default) to {}", text, cpus,
                             cpus == 1 ? "" : "s", cpus);
        }
        return {};
      },
      "0..CPUs");
}

}  // namespace rung::cli
