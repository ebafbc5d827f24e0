// The acceptance rule on constructed samples, at its boundaries: a rung is taken
// only when the interval of its paired ratio lies wholly under the acceptance
// ratio less the minimum gain; a tie keeps the floor.
#include <gtest/gtest.h>

#include <vector>

#include "core/speed_rule.h"

namespace rung {
namespace {

SpeedRule rule(double accept = 1.0) {
  SpeedRule r;
  r.acceptance_ratio = accept;
  r.min_gain = 0.05;
  r.confidence = 0.99;
  r.min_pairs = 8;
  return r;
}

std::vector<double> repeat(double v, int n) { return std::vector<double>(static_cast<std::size_t>(n), v); }

TEST(SignTestRankTest, EightPairsBoundTheMedianAtNinetyNinePercentBySevenDoNot) {
  EXPECT_EQ(sign_test_rank(7, 0.99), 0);   // 2 / 2^7 = 1.6% > 1%
  EXPECT_EQ(sign_test_rank(8, 0.99), 1);   // 2 / 2^8 = 0.8% <= 1%
  EXPECT_EQ(sign_test_rank(16, 0.99), 3);  // P(Bin(16, 1/2) <= 2) = 0.21% <= 0.5% < P(<= 3) = 1.06%
  EXPECT_EQ(sign_test_rank(6, 0.95), 1);
  EXPECT_EQ(sign_test_rank(5, 0.95), 0);
}

TEST(SpeedRuleTest, FewerPairsThanTheMinimumDecideNothing) {
  EXPECT_EQ(judge_speed(repeat(0.5, 7), rule()).call, SpeedCall::kNeedMore);
  EXPECT_EQ(judge_speed(repeat(0.5, 8), rule()).call, SpeedCall::kFaster);
  EXPECT_EQ(judge_speed({}, rule()).call, SpeedCall::kNeedMore);
}

TEST(SpeedRuleTest, TheMinimumPairsHoldEvenWhereTheSignTestWouldBoundTheMedian) {
  // At 95% six pairs already bound the median (rank 1), but the rule asks for eight.
  auto r = rule();
  r.confidence = 0.95;
  ASSERT_EQ(sign_test_rank(6, 0.95), 1);
  EXPECT_EQ(judge_speed(repeat(0.5, 6), r).call, SpeedCall::kNeedMore);
  EXPECT_EQ(judge_speed(repeat(0.5, 7), r).call, SpeedCall::kNeedMore);
  EXPECT_EQ(judge_speed(repeat(0.5, 8), r).call, SpeedCall::kFaster);
  r.min_pairs = 6;
  EXPECT_EQ(judge_speed(repeat(0.5, 6), r).call, SpeedCall::kFaster);
}

TEST(SpeedRuleTest, TakenOnlyWhenTheWholeIntervalLiesUnderTheBar) {
  // Eight pairs at 99%: the interval is [min, max]. The bar is 1.0 * (1 - 0.05) = 0.95.
  auto just_under = repeat(0.80, 7);
  just_under.push_back(0.9499);
  EXPECT_EQ(judge_speed(just_under, rule()).call, SpeedCall::kFaster);
  auto at_bar = repeat(0.80, 7);
  at_bar.push_back(0.95);
  const auto j = judge_speed(at_bar, rule());
  EXPECT_EQ(j.call, SpeedCall::kNeedMore);  // one pair at the bar: the interval reaches it
  EXPECT_DOUBLE_EQ(j.bar, 0.95);
  EXPECT_DOUBLE_EQ(j.high, 0.95);
  EXPECT_DOUBLE_EQ(j.low, 0.80);
  EXPECT_DOUBLE_EQ(j.ratio, 0.80);
}

TEST(SpeedRuleTest, TheBarIsTheAcceptanceRatioLessTheGainAskedNotAFixedShare) {
  // Eight pairs at 99%: the interval is [min, max]. At a gain of 20% and a ratio of 2 the bar is 1.6.
  auto r = rule(2.0);
  r.min_gain = 0.20;
  auto under = repeat(1.2, 7);
  under.push_back(1.5999);
  EXPECT_EQ(judge_speed(under, r).call, SpeedCall::kFaster);
  EXPECT_DOUBLE_EQ(judge_speed(under, r).bar, 1.6);
  auto at = repeat(1.2, 7);
  at.push_back(1.6);
  EXPECT_EQ(judge_speed(at, r).call, SpeedCall::kNeedMore);
  // At no gain the bar is the acceptance ratio itself.
  r.min_gain = 0;
  EXPECT_DOUBLE_EQ(judge_speed(repeat(1.99, 8), r).bar, 2.0);
  EXPECT_EQ(judge_speed(repeat(1.99, 8), r).call, SpeedCall::kFaster);
  EXPECT_EQ(judge_speed(repeat(2.0, 8), r).call, SpeedCall::kSlower);
}

TEST(SpeedRuleTest, ATieIsWithinNoiseNeverFaster) {
  EXPECT_EQ(judge_speed(repeat(0.95, 8), rule()).call, SpeedCall::kWithinNoise);   // low at the bar, under the ratio
  EXPECT_EQ(judge_speed(repeat(0.999, 8), rule()).call, SpeedCall::kWithinNoise);
  EXPECT_EQ(judge_speed(repeat(1.0, 8), rule()).call, SpeedCall::kSlower);         // low at the acceptance ratio
  // Half a little faster, half a little slower: the interval straddles the bar.
  std::vector<double> straddle;
  for (int i = 0; i < 20; ++i) straddle.push_back(i % 2 ? 0.90 : 1.10);
  EXPECT_EQ(judge_speed(straddle, rule()).call, SpeedCall::kNeedMore);
}

TEST(SpeedRuleTest, OutliersInsideTheRankIntervalDoNotMoveTheCall) {
  // Sixteen pairs at 99% drop the 2 lowest and 2 highest (k = 3): two wild pairs do not decide.
  auto ratios = repeat(0.70, 14);
  ratios.push_back(5.0);
  ratios.push_back(9.0);
  EXPECT_EQ(judge_speed(ratios, rule()).call, SpeedCall::kFaster);
  ratios.push_back(7.0);  // a third wild pair of 17 reaches the interval (k stays 3)
  EXPECT_EQ(judge_speed(ratios, rule()).call, SpeedCall::kNeedMore);
}

TEST(SpeedRuleTest, TheAcceptanceRatioAdmitsASlowerRung) {
  EXPECT_EQ(judge_speed(repeat(1.3, 8), rule(3.0)).call, SpeedCall::kFaster);   // bar 2.85
  EXPECT_EQ(judge_speed(repeat(2.86, 8), rule(3.0)).call, SpeedCall::kWithinNoise);
  EXPECT_EQ(judge_speed(repeat(3.0, 8), rule(3.0)).call, SpeedCall::kSlower);
}

}  // namespace
}  // namespace rung
