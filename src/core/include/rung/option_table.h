// Every knob an application and the command line turn, declared once (ONNX
// Runtime's named keys, llama.cpp's one table): its C key (also the Python
// binding's), its kind and range in the key's unit, what its default is, one
// line of doc. The C ABI's setters parse and range-check from it; the command
// line's face of each knob (its flag, the flag's unit, its environment
// variable) is cli/knob_flags.h, kept out of the engine library, which never
// names a flag, and its flags take their ranges from here; ctest holds that
// table, docs/abi.md and the Python binding to this one (tests/option-table-test.cc).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rung {

enum class OptionKind {
  kPath,      // one path (UTF-8)
  kPathEach,  // a path; each setting adds one
  kFlag,      // true or false
  kWhole,     // a whole number within [lo, hi]
  kReal,      // a finite number within [lo, hi]
  kText,      // text, not empty
  kAnyText,   // text, empty too
};

struct OptionRow {
  std::string_view key;   // "probe_runs"; a key with NAME or FORM in it is a family ("model.NAME.input_spec")
  OptionKind kind;
  double lo = 0;
  double hi = 0;          // kUsableCpus: the logical CPUs this process may use
  std::string_view unit;  // "runs", "milliseconds", "MiB", "threads"
  std::string_view zero;  // what 0 means, where it is in range and means something else ("no limit")
  std::string_view fallback;  // the default, in words
  std::string_view doc;
};

inline constexpr double kUsableCpus = -1;

std::span<const OptionRow> option_table();
// The row of a key; a family's row for a key of that family ("model.det.input_spec").
const OptionRow* find_option(std::string_view key);
// The upper bound on this machine (kUsableCpus resolved).
double option_hi(const OptionRow& row);
// What a refusal adds to the range: what 0 means, and this machine's CPUs where
// they bound it ("0: no limit"; "this machine gives rung 2 logical CPUs").
std::string option_range_why(const OptionRow& row);
// "1 to 1000 runs", "0 (no limit) to 16777216 MiB", as docs/abi.md and the errors state it.
std::string option_range_text(const OptionRow& row);

}  // namespace rung
