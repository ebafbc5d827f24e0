#include "rung/number_text.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

namespace rung::number_text {
namespace {

// "a whole number of threads from 0 to 16 (the logical CPUs ...)"
template <class T>
std::string expected(const char* kind, T lo, T hi, const std::string& unit, const std::string& why) {
  return fmt::format("expected {}{}{} from {} to {}{}", kind, unit.empty() ? "" : " of ", unit, lo, hi, why.empty() ? "" : " (" + why + ")");
}

// One leading '+' before a digit is allowed, as strtod allows it; from_chars does not.
std::string_view unsigned_text(const std::string& text) {
  std::string_view v = text;
  if (v.size() > 1 && v.front() == '+' && (std::isdigit(static_cast<unsigned char>(v[1])) || v[1] == '.')) v.remove_prefix(1);
  return v;
}

enum class Parsed { kOk, kNotANumber, kOutOfRange };

template <class T>
Parsed parse_whole(std::string_view text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) return Parsed::kOutOfRange;
  if (ec != std::errc() || end != text.data() + text.size()) return Parsed::kNotANumber;
  return Parsed::kOk;
}

Parsed parse_real(std::string_view text, double& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) return Parsed::kOutOfRange;
  if (ec != std::errc() || end != text.data() + text.size()) return Parsed::kNotANumber;
  return Parsed::kOk;
}

// Why text that is not a whole number was refused for an integer option: a
// fraction is "not a whole number", nan, inf and -1 for a count are out of range.
std::string not_whole(const std::string& text, bool negative_is_range, const std::string& range) {
  double d = 0;
  switch (parse_real(unsigned_text(text), d)) {
    case Parsed::kNotANumber: return fmt::format("'{}' is not a number; {}", text, range);
    case Parsed::kOutOfRange: return fmt::format("{} is out of range; {}", text, range);
    case Parsed::kOk: break;
  }
  if (!std::isfinite(d) || (negative_is_range && d < 0 && d == std::floor(d))) return fmt::format("{} is out of range; {}", text, range);
  if (d == std::floor(d)) return fmt::format("{} is not written as a whole number (digits only); {}", text, range);
  return fmt::format("{} is not a whole number; {}", text, range);
}

}  // namespace

std::string check_signed(std::string& text, long long lo, long long hi, const std::string& unit, const std::string& why) {
  const std::string range = expected("a whole number", lo, hi, unit, why);
  long long v = 0;
  switch (parse_whole(unsigned_text(text), v)) {
    case Parsed::kNotANumber: return not_whole(text, false, range);
    case Parsed::kOutOfRange: return fmt::format("{} is out of range; {}", text, range);
    case Parsed::kOk: break;
  }
  if (v < lo || v > hi) return fmt::format("{} is out of range; {}", text, range);
  text = std::to_string(v);
  return {};
}

std::string check_unsigned(std::string& text, unsigned long long lo, unsigned long long hi, const std::string& unit, const std::string& why) {
  const std::string range = expected("a whole number", lo, hi, unit, why);
  // from_chars refuses a '-' for an unsigned kind: a negative count is out of range, never wrapped round.
  unsigned long long v = 0;
  switch (parse_whole(unsigned_text(text), v)) {
    case Parsed::kNotANumber: return not_whole(text, true, range);
    case Parsed::kOutOfRange: return fmt::format("{} is out of range; {}", text, range);
    case Parsed::kOk: break;
  }
  if (v < lo || v > hi) return fmt::format("{} is out of range; {}", text, range);
  text = std::to_string(v);
  return {};
}

std::string check_real(std::string& text, double lo, double hi, const std::string& unit, const std::string& why) {
  const std::string range = expected("a finite number", lo, hi, unit, why);
  double v = 0;
  switch (parse_real(unsigned_text(text), v)) {
    case Parsed::kNotANumber: return fmt::format("'{}' is not a number; {}", text, range);
    case Parsed::kOutOfRange: return fmt::format("{} is out of range; {}", text, range);
    case Parsed::kOk: break;
  }
  if (!std::isfinite(v) || v < lo || v > hi) return fmt::format("{} is out of range; {}", text, range);
  text = fmt::format("{}", v);  // the shortest text that reads back as v
  return {};
}

}  // namespace rung::number_text
