// `rung bench compare A B`: two sets of bench records (each a record file, or a
// directory of them as `rung bench` writes for several models), and for every
// model × form × rung measured in both, B's time over A's as a ratio of medians
// with an interval, and a verdict against a threshold. The runs of two records
// are not paired (they ran at different times, perhaps on different machines),
// so the interval is an unpaired one: a percentile bootstrap that resamples A's
// runs and B's runs independently, when the records hold every run's time; else
// a normal approximation from the recorded percentiles (see ratio_from_summaries).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/result.h"

namespace rung {

struct BenchCompareOptions {
  double threshold = 0.10;   // a change smaller than this share is no change
  double confidence = 0.95;  // of the ratio's interval (two-sided)
  int resamples = 2000;      // bootstrap resamples
  std::uint64_t seed = 20261202;  // the bootstrap's: the same records give the same intervals
};

// B's median over A's, and its interval.
struct RatioInterval {
  double ratio = 0;
  double low = 0;
  double high = 0;
  std::string method;  // "bootstrap" (every run's time) or "summary" (the recorded p50, p90, count)
};

// Percentile bootstrap of median(b) / median(a): each resample draws |a| of A's
// runs and |b| of B's with replacement, independently (the runs are unpaired).
// More than kMaxBootstrapRuns runs on a side are thinned to every k-th, in order.
// Deterministic for a seed. Needs at least kMinBootstrapRuns on each side.
inline constexpr std::size_t kMinBootstrapRuns = 5;
inline constexpr std::size_t kMaxBootstrapRuns = 5000;
std::optional<RatioInterval> bootstrap_ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                                                      int resamples, std::uint64_t seed);

// What a record without every run's time still holds: each side's median, p90 and
// count. The median's standard error is taken as sqrt(pi/2) * sigma / sqrt(n), with
// sigma estimated from (p90 - p50) / 1.2816 (the normal's 90th percentile; the
// stddev when p90 equals p50), so a few outliers past p90 do not widen it; the
// interval is normal on the log of the ratio. Needs n >= 2 and p50 > 0 on each side.
struct TimingSummary {
  int count = 0;
  double p50 = 0;
  double p90 = 0;
  double stddev = 0;
};
std::optional<RatioInterval> ratio_from_summaries(const TimingSummary& a, const TimingSummary& b, double confidence);

enum class CompareVerdict {
  kRegression,   // the interval lies wholly above 1 + threshold
  kImprovement,  // the interval lies wholly below 1 - threshold
  kSame,         // the interval lies wholly within [1 - threshold, 1 + threshold]
  kUnclear,      // the interval crosses 1 + threshold or 1 - threshold (or there is none): more runs may decide
  kNotCompared,  // the row failed on a side, so there is no time to compare
  kOnlyInA,
  kOnlyInB,
};
const char* compare_verdict_name(CompareVerdict v);  // "regression", "improvement", "same", "unclear", "not compared", "only in A", "only in B"

// The verdict of an interval. Pure: regression when low > 1 + threshold,
// improvement when high < 1 - threshold, same when both ends lie within the
// band (its edges included), unclear otherwise.
CompareVerdict compare_verdict(double low, double high, double threshold);

// One side's row as compared.
struct CompareSide {
  double p50_ms = 0;
  int runs = 0;                 // timed runs the record counts
  bool every_run = false;       // the record holds every run's time
  std::string output_match;     // "reference", "match", "mismatch", "not compared"
  std::string failure;          // "build_failed: ..." when the row failed
};

struct CompareRow {
  std::string model;
  std::string form;             // the numeric form executed ("f32", "f16", "i8", ...)
  std::string rung;
  std::string rung_display;
  CompareVerdict verdict = CompareVerdict::kUnclear;
  std::optional<RatioInterval> interval;  // absent when not compared, or too few runs
  std::optional<CompareSide> a;
  std::optional<CompareSide> b;
  std::string reason;           // why not compared or unclear without an interval; a mismatch noted
};

// What was read from one side: the record files and, per model, the measurement used.
struct CompareInput {
  std::filesystem::path path;
  std::vector<std::filesystem::path> records;
  std::string date;             // the newest compared measurement's date
};

struct BenchComparison {
  CompareInput a;
  CompareInput b;
  BenchCompareOptions options;
  // Header lines: records from different machines, ONNX Runtime builds, settings
  // or model files; a record holding several measurements (the last is compared).
  std::vector<std::string> notes;
  std::vector<CompareRow> rows;  // models in A's order, then B's; per model A's rows, then rows only in B
  int count(CompareVerdict v) const;
};

// Reads both sides through the bounded JSON reader and compares them. Errors
// (kInvalidArgument or kNotFound), each naming the file and the reason: a path
// that is missing, a directory with no record, a file that is not JSON, not a
// rung bench record or a damaged one (a row without its rung, a latency of the
// wrong type), two records of one model name on one side.
Result<BenchComparison> compare_bench_records(const std::filesystem::path& a, const std::filesystem::path& b,
                                              const BenchCompareOptions& options = {});

// The comparison as one self-contained HTML page (no script, no external
// resource): one <tr class="row VERDICT"> per model × rung, with an inline SVG
// bar of the ratio's interval around 1.0 and the threshold band; regressions highlighted.
std::string bench_comparison_html(const BenchComparison& comparison);

}  // namespace rung
