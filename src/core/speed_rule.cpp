#include "core/speed_rule.h"

#include <algorithm>
#include <cmath>

#include "core/sample_stats.h"

namespace rung {

const char* speed_call_name(SpeedCall c) {
  switch (c) {
    case SpeedCall::kFaster: return "faster";
    case SpeedCall::kSlower: return "slower";
    case SpeedCall::kWithinNoise: return "within noise";
    case SpeedCall::kNeedMore: return "need more";
  }
  return "?";
}

int sign_test_rank(int n, double confidence) {
  if (n < 1) return 0;
  const double tail = (1 - confidence) / 2;
  // P(Bin(n, 1/2) <= j), summed term by term in log space (n may be large).
  double cdf = 0;
  int k = 0;
  for (int j = 0; j < n; ++j) {
    const double log_pmf = std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) - n * std::log(2.0);
    cdf += std::exp(log_pmf);
    if (cdf > tail) break;
    k = j + 1;  // P(Bin <= k - 1) <= tail: [x_(k), x_(n-k+1)] covers the median with the confidence asked
  }
  return std::min(k, (n + 1) / 2);
}

SpeedJudgement judge_speed(const std::vector<double>& ratios, const SpeedRule& rule) {
  SpeedJudgement j;
  j.pairs = static_cast<int>(ratios.size());
  j.bar = rule.acceptance_ratio * (1 - rule.min_gain);
  if (ratios.empty()) return j;
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  j.ratio = median(sorted);
  const int k = j.pairs >= rule.min_pairs ? sign_test_rank(j.pairs, rule.confidence) : 0;
  if (k == 0) {
    j.low = sorted.front();
    j.high = sorted.back();
    return j;  // too few pairs to bound the median: need more
  }
  j.low = sorted[static_cast<std::size_t>(k - 1)];
  j.high = sorted[static_cast<std::size_t>(j.pairs - k)];
  if (j.high < j.bar) {
    j.call = SpeedCall::kFaster;
  } else if (j.low >= rule.acceptance_ratio) {
    j.call = SpeedCall::kSlower;
  } else if (j.low >= j.bar) {
    j.call = SpeedCall::kWithinNoise;
  }
  return j;
}

}  // namespace rung
