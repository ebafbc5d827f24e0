// How a quantised form's timed runs are judged against the f32 file's, on
// constructed run times at the rule's boundaries: six pairs are the fewest that
// judge, a form is slower only when every pair the interval keeps is, and the
// ratio is taken pair by pair (so a load that slows both alike cancels).
#include <gtest/gtest.h>

#include <vector>

#include "quantise/speed.h"

namespace rung {
namespace {

SpeedEvidence timed(std::vector<double> f32, std::vector<double> quantised) {
  SpeedEvidence e;
  e.runs = static_cast<int>(f32.size());
  e.f32_runs_ms = std::move(f32);
  e.quantised_runs_ms = std::move(quantised);
  return e;
}

TEST(QuantisedSpeedTest, FivePairsAllSlowerAreTooFewToJudge) {
  const auto j = timed({10, 10, 10, 10, 10}, {20, 20, 20, 20, 20}).judgement();
  EXPECT_EQ(j.call, SpeedCall::kNeedMore);
}

TEST(QuantisedSpeedTest, SixPairsAllSlowerAreSlower) {
  const auto j = timed({10, 10, 10, 10, 10, 10}, {11, 12, 11, 13, 11, 12}).judgement();
  EXPECT_EQ(j.call, SpeedCall::kSlower);
  EXPECT_DOUBLE_EQ(j.low, 1.1);   // the interval at six pairs is the whole range
  EXPECT_DOUBLE_EQ(j.high, 1.3);
}

TEST(QuantisedSpeedTest, OneFasterPairInSixLeavesItUnjudged) {
  const auto j = timed({10, 10, 10, 10, 10, 10}, {11, 12, 11, 13, 11, 9}).judgement();
  EXPECT_EQ(j.call, SpeedCall::kNeedMore);
}

TEST(QuantisedSpeedTest, AtTenPairsOneOutlierOnEachSideIsDropped) {
  // Ten pairs: the 2nd smallest to the 2nd largest ratio (97.9%); one fast pair does not save a slow form.
  const auto j = timed(std::vector<double>(10, 10.0), {9, 11, 11, 11, 12, 12, 12, 12, 13, 30}).judgement();
  EXPECT_EQ(j.call, SpeedCall::kSlower);
  EXPECT_DOUBLE_EQ(j.low, 1.1);
  EXPECT_DOUBLE_EQ(j.high, 1.3);
}

TEST(QuantisedSpeedTest, RatiosArePairedSoALoadThatSlowsBothCancels) {
  // The machine got busy halfway: the medians alone would see nothing, the pairs see a form 20% faster.
  const auto j = timed({10, 10, 10, 30, 30, 30}, {8, 8, 8, 24, 24, 24}).judgement();
  EXPECT_EQ(j.call, SpeedCall::kFaster);
  EXPECT_DOUBLE_EQ(j.ratio, 0.8);
}

TEST(QuantisedSpeedTest, AnIntervalTouchingOneIsWithinNoiseNotSlower) {
  EXPECT_EQ(timed(std::vector<double>(20, 5.0), std::vector<double>(20, 5.0)).judgement().call, SpeedCall::kWithinNoise);
  EXPECT_EQ(timed(std::vector<double>(6, 10.0), {10, 11, 11, 11, 11, 11}).judgement().call, SpeedCall::kWithinNoise);
}

// The refusal, on recorded times: each input changed alone from the one case
// it refuses (an int8 form for the CPU, judged slower, not allowed), so a test
// never waits on this machine's clock to call a form slower.
const SpeedEvidence kSlower = timed(std::vector<double>(6, 10.0), {11, 12, 11, 13, 11, 12});

TEST(SpeedRefusalTest, AnInt8FormForTheCpuJudgedSlowerIsRefusedNamingTheInterval) {
  const auto refused = speed_refusal(NumericForm::kInt8, QdqTarget::kCpu, &kSlower, false);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, "speed · slower than f32 on this CPU (1.1–1.3× its time); --form w8 stores the weights as int8 and keeps float arithmetic");
}

TEST(SpeedRefusalTest, AW8FormIsRefusedTooWithoutPointingAtItself) {
  const auto refused = speed_refusal(NumericForm::kW8, QdqTarget::kCpu, &kSlower, false);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, "speed · slower than f32 on this CPU (1.1–1.3× its time)");
}

TEST(SpeedRefusalTest, AllowedSlowerIsNeverRefused) {
  EXPECT_FALSE(speed_refusal(NumericForm::kInt8, QdqTarget::kCpu, &kSlower, true));
  EXPECT_FALSE(speed_refusal(NumericForm::kW8, QdqTarget::kCpu, &kSlower, true));
}

TEST(SpeedRefusalTest, AFormPlacedForAnNpuIsNotJudgedOnThisCpusClock) {
  EXPECT_FALSE(speed_refusal(NumericForm::kInt8, QdqTarget::kNpu, &kSlower, false));
}

TEST(SpeedRefusalTest, SixteenBitAndFloatFormsAreAskedForAccuracyNotSpeed) {
  for (NumericForm form : {NumericForm::kA16W8, NumericForm::kA16W16, NumericForm::kF16, NumericForm::kF32}) {
    EXPECT_FALSE(speed_refusal(form, QdqTarget::kCpu, &kSlower, false)) << numeric_form_name(form);
  }
}

TEST(SpeedRefusalTest, AnUntimedFormIsNotRefused) {
  EXPECT_FALSE(speed_refusal(NumericForm::kInt8, QdqTarget::kCpu, nullptr, false));
}

TEST(SpeedRefusalTest, OnlyASlowerJudgementRefuses) {
  // Five slower pairs are too few to judge; one faster pair in six leaves it unjudged; equal is noise; faster pays.
  const SpeedEvidence too_few = timed({10, 10, 10, 10, 10}, {20, 20, 20, 20, 20});
  const SpeedEvidence one_faster = timed(std::vector<double>(6, 10.0), {11, 12, 11, 13, 11, 9});
  const SpeedEvidence equal = timed(std::vector<double>(20, 5.0), std::vector<double>(20, 5.0));
  const SpeedEvidence faster = timed(std::vector<double>(6, 10.0), std::vector<double>(6, 8.0));
  for (const SpeedEvidence* e : {&too_few, &one_faster, &equal, &faster}) {
    EXPECT_FALSE(speed_refusal(NumericForm::kInt8, QdqTarget::kCpu, e, false)) << e->judgement().ratio;
  }
}

}  // namespace
}  // namespace rung
