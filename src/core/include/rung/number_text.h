// A number given as text (a CLI option, a C ABI option value) is checked where it
// is parsed: decimal, finite, whole for an integer kind, inside a stated range.
// One parser for every way in, so `nan`, `-1` for a count or `1e300` for a
// deadline is refused alike wherever it arrives.
#pragma once

#include <string>

namespace rung::number_text {

// Each parses `text` strictly (decimal; digits only for an integer kind, one
// leading '+' allowed), refuses what is not a number, not finite, not whole or
// outside lo..hi, and on success rewrites `text` in a canonical form that reads
// back as the value checked. Returns "" or why not ("nan is out of range;
// expected a finite number of seconds from 0.001 to 86400").
std::string check_signed(std::string& text, long long lo, long long hi, const std::string& unit, const std::string& why);
std::string check_unsigned(std::string& text, unsigned long long lo, unsigned long long hi, const std::string& unit,
                           const std::string& why);
std::string check_real(std::string& text, double lo, double hi, const std::string& unit, const std::string& why);

}  // namespace rung::number_text
