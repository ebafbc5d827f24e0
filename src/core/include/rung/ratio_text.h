// One way to write a ratio of times, in every output of every command: a time
// ratio, the time of what is judged over the time of its reference (a rung over
// the CPU floor, a form over f32, record B over record A), written with "×" and
// its interval with an en dash: "0.76× [0.71–0.80]". Below 1× is faster. rung
// never prints a speed-up (the reference's time over the judged one's), so a
// figure reads one way wherever it appears.
#pragma once

#include <fmt/format.h>

#include <string>

namespace rung {

// A ratio's figure for a sentence: three significant digits ("0.763", "1.1"),
// whole from 100 up ("1000", never "1e+03").
inline std::string ratio_figure(double ratio) { return ratio >= 100 ? fmt::format("{:.0f}", ratio) : fmt::format("{:.3g}", ratio); }

// "0.763×", for sentences and reasons.
inline std::string ratio_text(double ratio) { return ratio_figure(ratio) + "×"; }

// "0.71–0.8×": an interval of time ratios, for sentences and reasons.
inline std::string ratio_range_text(double low, double high) { return ratio_figure(low) + "–" + ratio_figure(high) + "×"; }

// "0.76× [0.71–0.80]", or "0.76×" without an interval: two decimals, for table cells.
inline std::string ratio_cell(double ratio) { return fmt::format("{:.2f}×", ratio); }
inline std::string ratio_cell(double ratio, double low, double high) { return fmt::format("{:.2f}× [{:.2f}–{:.2f}]", ratio, low, high); }

}  // namespace rung
