// Whether a rung is faster than the floor, judged on the two sides'
// distributions rather than on two medians. The probe times the floor and the
// rung alternately in one process, so each pair of runs meets the same load;
// the ratio of each pair is one sample. The rung is taken only when a
// sign-test interval of the median ratio lies wholly under the acceptance
// ratio less a minimum gain: a tie, or a gain inside the spread, keeps the
// lower rung, because moving costs more than it gains.
#pragma once

#include <string>
#include <vector>

namespace rung {

struct SpeedRule {
  double acceptance_ratio = 1.0;  // the rung may take up to this times the floor's time
  double min_gain = 0.05;         // ... less this share: what moving must gain to be worth it
  double confidence = 0.99;       // of the interval of the median ratio (two-sided)
  int min_pairs = 8;              // fewer pairs decide nothing
};

enum class SpeedCall {
  kFaster,       // the interval lies under acceptance_ratio * (1 - min_gain): take it
  kSlower,       // the interval lies at or above acceptance_ratio
  kWithinNoise,  // the interval lies at or above the bar, but not wholly above the acceptance ratio: too little gain
  kNeedMore,     // the interval straddles the bar: more pairs may decide
};
const char* speed_call_name(SpeedCall c);  // "faster", "slower", "within noise", "need more"

struct SpeedJudgement {
  SpeedCall call = SpeedCall::kNeedMore;
  double ratio = 0;   // median of the paired ratios (rung / floor)
  double low = 0;     // the interval of that median
  double high = 0;
  int pairs = 0;
  double bar = 0;     // acceptance_ratio * (1 - min_gain)
};

// Judges paired ratios (each rung time / floor time of one pair). Pure.
SpeedJudgement judge_speed(const std::vector<double>& ratios, const SpeedRule& rule);

// The largest k such that the k-th smallest and k-th largest of n samples bound
// the median with at least `confidence` (sign test); 0 when n is too small.
int sign_test_rank(int n, double confidence);

}  // namespace rung
