#include "numeric_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

#include "rung/cpus.h"
#include "rung/number_text.h"
#include "rung/option_table.h"
#include "knob_flags.h"

namespace rung::cli::numeric_detail {

std::string range_name(long long lo, long long hi) { return fmt::format("{}..{}", lo, hi); }
std::string range_name(unsigned long long lo, unsigned long long hi) { return fmt::format("{}..{}", lo, hi); }
std::string range_name(double lo, double hi) { return fmt::format("{}..{}", lo, hi); }

void require_sane_range(const std::string& name, bool ordered, bool finite) {
  // A programming error in a command's declaration, caught by any run of the CLI.
  if (!ordered || !finite) throw std::logic_error("option " + name + ": its range must be finite and ordered (lo <= hi)");
}

}  // namespace rung::cli::numeric_detail

namespace rung::cli {

Range<int> thread_count() {
  const int cpus = usable_cpus();
  return {0, cpus, "threads", fmt::format("0: the default; this machine gives rung {} logical CPU{}", cpus, cpus == 1 ? "" : "s")};
}

Range<int> thread_count_from_one() {
  const int cpus = usable_cpus();
  return {1, cpus, "threads", fmt::format("this machine gives rung {} logical CPU{}", cpus, cpus == 1 ? "" : "s")};
}

Range<double> deadline_seconds() { return knob_range_real("probe_deadline_ms", "seconds"); }
Range<double> acceptance_ratio() { return knob_range_real("acceptance_ratio"); }

namespace {

const OptionRow& knob(std::string_view key) {
  const OptionRow* row = find_option(key);
  if (row == nullptr) throw std::logic_error("no knob " + std::string(key) + " in rung/option_table.h");
  return *row;
}

double per_unit(std::string_view key) {
  const KnobFlag* f = knob_flag(key);
  if (f == nullptr) throw std::logic_error("no flag for knob " + std::string(key) + " in cli/knob_flags.h");
  return f->per_unit;
}

}  // namespace

Range<double> knob_range_real(std::string_view key, std::string unit) {
  const OptionRow& row = knob(key);
  const double per = per_unit(key);
  return {row.lo / per, option_hi(row) / per, unit.empty() ? std::string(row.unit) : unit, option_range_why(row)};
}

std::chrono::milliseconds deadline_from_seconds(double seconds) {
  // The range keeps this finite and within a day, so the rounding cannot overflow.
  return std::chrono::milliseconds(std::max(1LL, std::llround(std::clamp(seconds, kMinDeadlineSeconds, kMaxDeadlineSeconds) * 1000)));
}

}  // namespace rung::cli
