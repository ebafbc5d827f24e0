#include "core/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rung {

double median(std::vector<double> s) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double percentile(std::vector<double> s, double p) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (rank - static_cast<double>(lo));
}

SampleSummary summarize(const std::vector<double>& s) {
  SampleSummary r;
  if (s.empty()) return r;
  r.count = static_cast<int>(s.size());
  auto [lo, hi] = std::minmax_element(s.begin(), s.end());
  r.min = *lo;
  r.max = *hi;
  r.p50 = median(s);
  r.p90 = percentile(s, 90);
  r.p99 = percentile(s, 99);
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  if (s.size() > 1) {
    double ss = 0;
    for (double x : s) ss += (x - r.mean) * (x - r.mean);
    r.stddev = std::sqrt(ss / static_cast<double>(s.size() - 1));
  }
  r.cv = r.mean > 0 ? r.stddev / r.mean : 0;
  return r;
}

}  // namespace rung
