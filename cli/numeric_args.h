// The one way an option is declared, for the CLI and the example applications
// (tools/check-options.py fails on any other add_option). A number is checked
// where it is parsed: finite, whole for an integer, inside a stated range, so
// `--deadline nan`, `--random -1` or `--threads 100000` is a usage error (exit
// 2) naming the option and the range, never a wait forever, a wrap-around, an
// overflow or a machine brought to its knees. Text options take no number, so a
// number can never slip in through them unchecked.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "rung/limits.h"
#include "rung/number_text.h"
#include "rung/path_text.h"

namespace rung::cli {

// The values a numeric option takes: lo to hi, both included, said with a unit
// ("seconds", "threads"; empty for a bare number) and, when the bound is not
// obvious, where it comes from.
template <class T>
struct Range {
  T lo;
  T hi;
  std::string unit = {};
  std::string why = {};
};

namespace numeric_detail {

// The strict parsers (rung/number_text.h), shared with the C ABI's options.
using number_text::check_real;
using number_text::check_signed;
using number_text::check_unsigned;
// "1..16" for the help text.
std::string range_name(long long lo, long long hi);
std::string range_name(unsigned long long lo, unsigned long long hi);
std::string range_name(double lo, double hi);
void require_sane_range(const std::string& name, bool ordered, bool finite);

template <class T>
inline constexpr bool is_text_like = std::is_same_v<T, std::string> || std::is_same_v<T, std::filesystem::path>;
template <class T>
struct is_text_option : std::bool_constant<is_text_like<T>> {};
template <class T, class A>
struct is_text_option<std::vector<T, A>> : std::bool_constant<is_text_like<T>> {};

}  // namespace numeric_detail

// A numeric option (or positional argument): every value given is checked
// against `range` before it reaches `var`; `var`'s initial value is the default.
template <class T>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& var, const std::string& description,
                        const std::type_identity_t<Range<T>>& range) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "add_number takes a number: add_flag for a switch, add_text for text");
  static_assert(sizeof(T) <= sizeof(long long), "add_number: no wider integers or floats");
  bool finite = true;
  if constexpr (std::is_floating_point_v<T>) finite = std::isfinite(range.lo) && std::isfinite(range.hi);
  numeric_detail::require_sane_range(name, range.lo <= range.hi, finite);
  std::function<std::string(std::string&)> check;
  std::string shown;
  if constexpr (std::is_floating_point_v<T>) {
    const double lo = range.lo, hi = range.hi;
    check = [lo, hi, unit = range.unit, why = range.why](std::string& text) { return numeric_detail::check_real(text, lo, hi, unit, why); };
    shown = numeric_detail::range_name(lo, hi);
  } else if constexpr (std::is_signed_v<T>) {
    const long long lo = range.lo, hi = range.hi;
    check = [lo, hi, unit = range.unit, why = range.why](std::string& text) { return numeric_detail::check_signed(text, lo, hi, unit, why); };
    shown = numeric_detail::range_name(lo, hi);
  } else {
    const unsigned long long lo = range.lo, hi = range.hi;
    check = [lo, hi, unit = range.unit, why = range.why](std::string& text) { return numeric_detail::check_unsigned(text, lo, hi, unit, why); };
    shown = numeric_detail::range_name(lo, hi);
  }
  // A transform, not a check: it may rewrite the text to its canonical form.
  // CLI11's add_option is called here and in add_text only.
  return app.add_option(name, var, description)->transform(CLI::Validator(std::move(check), shown));
}

// A text option (or positional argument): a string, a path, or a list of them.
template <class T>
CLI::Option* add_text(CLI::App& app, const std::string& name, T& var, const std::string& description) {
  static_assert(numeric_detail::is_text_option<T>::value,
                "add_text takes strings and paths (or lists of them); a number goes through add_number, with its range");
  // A path is made from the argument's UTF-8 by rung/path_text.h, not by
  // CLI11's assignment, which reads it in the system's code page on Windows.
  if constexpr (std::is_same_v<T, std::filesystem::path>) {
    return app.add_option_function<std::string>(name, [&var](const std::string& text) { var = path_from_utf8(text); }, description)
        ->type_name("TEXT");
  } else if constexpr (std::is_same_v<T, std::vector<std::filesystem::path>>) {
    return app.add_option_function<std::vector<std::string>>(name, [&var](const std::vector<std::string>& texts) {
      var.clear();
      for (const auto& text : texts) var.push_back(path_from_utf8(text));
    }, description)->type_name("TEXT");
  } else {
    return app.add_option(name, var, description);
  }
}

// A thread count: 0 (the command's default) up to the logical CPUs this process may use.
Range<int> thread_count();
// The same from 1: a count that has no "default" meaning for 0.
Range<int> thread_count_from_one();

// The range of the engine's knob `key` in rung/option_table.h, in the flag's
// unit (the row's units per flag unit divide it: milliseconds to seconds), so a
// flag and the C key for the same knob take the same numbers.
Range<double> knob_range_real(std::string_view key, std::string unit = {});
template <typename T>
Range<T> knob_range(std::string_view key, std::string unit = {}) {
  Range<double> r = knob_range_real(key, std::move(unit));
  if constexpr (std::is_integral_v<T>) {
    return {static_cast<T>(std::llround(r.lo)), static_cast<T>(std::llround(r.hi)), std::move(r.unit), std::move(r.why)};
  } else {
    return r;
  }
}

// A deadline: a finite number of seconds within rung/limits.h's kMinDeadline
// (the runner counts in milliseconds) and kMaxDeadline, as the library checks.
inline constexpr double kMinDeadlineSeconds = std::chrono::duration<double>(kMinDeadline).count();
inline constexpr double kMaxDeadlineSeconds = std::chrono::duration<double>(kMaxDeadline).count();
Range<double> deadline_seconds();
// An acceptance ratio within rung/limits.h's bounds, as the C ABI checks it.
Range<double> acceptance_ratio();
// A deadline option's value as the library takes it.
std::chrono::milliseconds deadline_from_seconds(double seconds);

}  // namespace rung::cli
