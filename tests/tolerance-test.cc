// The one element rule (Tolerance::compare) at each of its boundaries, one bound
// at a time, and the comparisons built on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "test_support.h"
#include "rung/tolerance.h"

namespace rung {
namespace {
using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

double above(double x) { return std::nextafter(x, kInf); }
// Just beyond a boundary: a step small against every bound here and exact in binary, so
// differences of these values are computed without rounding.
constexpr double kStep = 0x1p-20;

// Only the absolute bound can pass a difference: rtol 0 never covers one.
Tolerance atol_only(double atol) { return {atol, 0.0}; }
// Only the relative bound can pass a difference.
Tolerance rtol_only(double rtol) { return {0.0, rtol}; }

bool mismatch(const Tolerance& t, double reference, double candidate) { return t.compare(reference, candidate).mismatch; }

TEST(ToleranceTest, EqualElementsMatchEvenExactly) {
  EXPECT_FALSE(mismatch(Tolerance::exact(), 0.25, 0.25));
  EXPECT_FALSE(mismatch(Tolerance::exact(), 0.0, -0.0));
  EXPECT_TRUE(mismatch(Tolerance::exact(), 1.0, above(1.0)));
}

// 1.0 against 1.5 differ by exactly 0.5 in binary, so the boundary is exact.
TEST(ToleranceTest, AbsoluteDifferenceAtAtolPassesAndJustAboveFails) {
  EXPECT_FALSE(mismatch(atol_only(0.5), 1.0, 1.5));
  EXPECT_TRUE(mismatch(atol_only(0.5), 1.0, 1.5 + kStep));
  EXPECT_TRUE(mismatch(atol_only(0.5 - kStep), 1.0, 1.5));
}

TEST(ToleranceTest, AbsoluteBoundHoldsBelowTheReferenceToo) {
  EXPECT_FALSE(mismatch(atol_only(0.5), 1.0, 0.5));
  EXPECT_TRUE(mismatch(atol_only(0.5), 1.0, 0.5 - kStep));
}

// 2.0 against 3.0: abs 1, rel exactly 0.5.
TEST(ToleranceTest, RelativeDifferenceAtRtolPassesAndJustAboveFails) {
  EXPECT_FALSE(mismatch(rtol_only(0.5), 2.0, 3.0));
  EXPECT_TRUE(mismatch(rtol_only(0.5), 2.0, 3.0 + kStep));
  EXPECT_TRUE(mismatch(rtol_only(0.5 - kStep), 2.0, 3.0));
}

TEST(ToleranceTest, RelativeBoundHoldsBelowTheReferenceToo) {
  EXPECT_FALSE(mismatch(rtol_only(0.5), 2.0, 1.0));
  EXPECT_TRUE(mismatch(rtol_only(0.5), 2.0, 1.0 - kStep));
}

TEST(ToleranceTest, RelativeDifferenceIsOverTheReferenceNotTheCandidate) {
  // abs 1: over the reference 2 that is 0.5; over the candidate 1 it would be 1.
  const auto d = rtol_only(0.5).compare(2.0, 1.0);
  EXPECT_DOUBLE_EQ(d.rel, 0.5);
  // Swapped, the reference is 1: rel 1, beyond 0.5.
  EXPECT_TRUE(mismatch(rtol_only(0.5), 1.0, 2.0));
}

TEST(ToleranceTest, NegativeValuesUseMagnitudes) {
  const auto d = Tolerance::close().compare(-2.0, -3.0);
  EXPECT_DOUBLE_EQ(d.abs, 1.0);
  EXPECT_DOUBLE_EQ(d.rel, 0.5);
  EXPECT_FALSE(mismatch(rtol_only(0.5), -2.0, -3.0));
  EXPECT_TRUE(mismatch(rtol_only(0.5), -2.0, -3.0 - kStep));
  EXPECT_FALSE(mismatch(atol_only(0.5), -1.0, -1.5));
  EXPECT_TRUE(mismatch(atol_only(0.5), -1.0, -1.5 - kStep));
  // Across zero: -0.25 against 0.25 differ by 0.5.
  EXPECT_FALSE(mismatch(atol_only(0.5), -0.25, 0.25));
  EXPECT_TRUE(mismatch(atol_only(0.5 - kStep), -0.25, 0.25));
}

TEST(ToleranceTest, EitherBoundAlonePassesAnElement) {
  // abs 0.5, rel 0.5: passes when either covers it, fails only when neither does.
  EXPECT_FALSE(mismatch({0.5, 0.0}, 1.0, 1.5));
  EXPECT_FALSE(mismatch({0.0, 0.5}, 1.0, 1.5));
  EXPECT_FALSE(mismatch({0.5, 0.5}, 1.0, 1.5));
  EXPECT_TRUE(mismatch({0.5 - kStep, 0.5 - kStep}, 1.0, 1.5));
}

TEST(ToleranceTest, AZeroReferenceIsJudgedByAtolAlone) {
  // A difference from zero is over 1e-30: relatively enormous, so a large rtol does not cover it.
  EXPECT_TRUE(mismatch({0.0, 1e6}, 0.0, 1e-20));
  EXPECT_FALSE(mismatch({1e-20, 0.0}, 0.0, 1e-20));
  EXPECT_TRUE(mismatch({1e-20, 0.0}, 0.0, above(1e-20)));
  EXPECT_TRUE(mismatch({1e-20, 0.0}, 0.0, -above(1e-20)));
  // A zero candidate against a non-zero reference is an ordinary relative difference of 1.
  EXPECT_FALSE(mismatch(rtol_only(1.0), 3.0, 0.0));
  EXPECT_TRUE(mismatch(rtol_only(1.0 - kStep), 3.0, 0.0));
}

TEST(ToleranceTest, EqualInfinitiesMatchAndAnyOtherInfinityMismatchesAtAnyTolerance) {
  const Tolerance loose{1e300, 1e300};
  EXPECT_FALSE(mismatch(Tolerance::exact(), kInf, kInf));
  EXPECT_FALSE(mismatch(Tolerance::exact(), -kInf, -kInf));
  EXPECT_TRUE(mismatch(loose, kInf, -kInf));
  EXPECT_TRUE(mismatch(loose, kInf, 1.0));   // an infinite reference
  EXPECT_TRUE(mismatch(loose, 1.0, kInf));   // an infinite candidate
  EXPECT_TRUE(mismatch(loose, -kInf, 0.0));
  const auto d = loose.compare(kInf, 1.0);
  EXPECT_TRUE(d.infinite);
  EXPECT_FALSE(d.measured());
}

TEST(ToleranceTest, NanMismatchesEveryNumberAtAnyToleranceAndAgreesWithNan) {
  const Tolerance loose{1e300, 1e300};
  EXPECT_TRUE(mismatch(loose, kNaN, 1.0));
  EXPECT_TRUE(mismatch(loose, 1.0, kNaN));
  EXPECT_TRUE(mismatch(loose, kNaN, kInf));
  // NaN where the reference has NaN is the same result, even at the exact tolerance.
  EXPECT_FALSE(mismatch(Tolerance::exact(), kNaN, kNaN));
  const auto both = Tolerance::exact().compare(kNaN, kNaN);
  EXPECT_TRUE(both.nan);
  EXPECT_FALSE(both.measured());  // no size to average
  EXPECT_EQ(Tolerance::exact().atol_to_pass(both), 0.0);
  const auto d = loose.compare(0.0, kNaN);
  EXPECT_TRUE(d.nan);
  EXPECT_FALSE(d.infinite);
  EXPECT_FALSE(d.measured());
}

TEST(ToleranceTest, NanEqualsNanOnlyWhereTheToleranceSaysSoAndNothingElse) {
  Tolerance t = Tolerance::exact();
  t.nan_equal = false;  // turned off, NaN agrees with nothing, itself included
  EXPECT_TRUE(mismatch(t, kNaN, kNaN));
  t.nan_equal = true;  // NumPy's equal_nan, as ONNX's expected outputs are checked
  EXPECT_FALSE(mismatch(t, kNaN, kNaN));
  EXPECT_TRUE(mismatch(t, kNaN, 1.0));
  EXPECT_TRUE(mismatch(t, 1.0, kNaN));
  EXPECT_TRUE(mismatch(t, kNaN, kInf));
  EXPECT_EQ(t.atol_to_pass(t.compare(kNaN, kNaN)), 0.0);
  EXPECT_TRUE(mismatch(t, 1.0, 1.0 + kStep));  // the bounds themselves are unchanged
}

TEST(ToleranceTest, TheLoosestBoundsThatPassAnElementAreItsOwnDifferences) {
  // abs 0.5, rel 0.5, held to atol 0.1 and rtol 0.1: it fails.
  const Tolerance t{0.1, 0.1};
  const auto d = t.compare(1.0, 1.5);
  ASSERT_TRUE(d.mismatch);
  EXPECT_DOUBLE_EQ(t.atol_to_pass(d), 0.5);
  EXPECT_DOUBLE_EQ(t.rtol_to_pass(d), 0.5);
  EXPECT_FALSE(mismatch({t.atol_to_pass(d), t.rtol}, 1.0, 1.5));
  EXPECT_FALSE(mismatch({t.atol, t.rtol_to_pass(d)}, 1.0, 1.5));
  EXPECT_TRUE(mismatch({t.atol_to_pass(d) - kStep, t.rtol}, 1.0, 1.5));
  EXPECT_TRUE(mismatch({t.atol, t.rtol_to_pass(d) - kStep}, 1.0, 1.5));
  // Already covered by the other bound: nothing more is needed.
  const Tolerance wide_rtol{0.1, 0.5};
  EXPECT_EQ(wide_rtol.atol_to_pass(wide_rtol.compare(1.0, 1.5)), 0.0);
  const Tolerance wide_atol{0.5, 0.1};
  EXPECT_EQ(wide_atol.rtol_to_pass(wide_atol.compare(1.0, 1.5)), 0.0);
  // Nothing passes a NaN or an unequal infinity; equal ones need nothing.
  EXPECT_EQ(t.atol_to_pass(t.compare(kNaN, 1.0)), kInf);
  EXPECT_EQ(t.rtol_to_pass(t.compare(1.0, kInf)), kInf);
  EXPECT_EQ(t.atol_to_pass(t.compare(kInf, kInf)), 0.0);
}

TEST(ToleranceTest, NamedTolerancesHoldTheirDocumentedNumbers) {
  auto is = [](const Tolerance& t, double atol, double rtol) { return t.atol == atol && t.rtol == rtol; };
  EXPECT_TRUE(is(Tolerance::exact(), 0.0, 0.0));
  EXPECT_TRUE(is(Tolerance::close(), 1e-4, 1e-3));
  EXPECT_TRUE(is(Tolerance::approximate(), 1e-2, 5e-2));
  EXPECT_TRUE(is(Tolerance::quantised(), 5e-2, 1e-1));
  EXPECT_TRUE(is(Tolerance::polygraphy(), 1e-5, 1e-5));
  EXPECT_TRUE(is(Tolerance{}, 1e-4, 1e-3));  // a default Tolerance is close()
  EXPECT_TRUE(is(Tolerance::onnx_backend(), 1e-7, 1e-3));
  EXPECT_TRUE(Tolerance::onnx_backend().nan_equal);
  EXPECT_TRUE(Tolerance{}.nan_equal);  // NaN at the same element on both sides is agreement by default
  EXPECT_TRUE(is(Tolerance::float16(), 1e-3, 2.0 / 1024));
  EXPECT_TRUE(is(Tolerance::bfloat16(), 1e-2, 2.0 / 128));
}

TEST(ToleranceTest, AFormIsHeldToTheToleranceOfTheArithmeticItRuns) {
  const Tolerance mine{3e-3, 4e-3};
  auto is = [](const Tolerance& t, const Tolerance& u) { return t.atol == u.atol && t.rtol == u.rtol; };
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kF32, NumericForm::kF32, mine), mine));
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kF32, NumericForm::kF16, mine), Tolerance::approximate()));
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kF16, NumericForm::kF16, mine), mine));
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kF32, NumericForm::kInt8, mine), Tolerance::quantised()));
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kF32, NumericForm::kA16W8, mine), Tolerance::quantised()));
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kF32, NumericForm::kA16W16, mine), Tolerance::quantised()));
  EXPECT_TRUE(is(Tolerance::for_forms(NumericForm::kInt8, NumericForm::kInt8, mine), mine));
}

Tensor floats(const std::string& name, const std::vector<float>& values) { return test::float_tensor(name, values); }

TEST(ToleranceTest, TensorComparisonCountsMismatchesAndReportsTheLargestMeasuredDifference) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto c = compare_tensors(floats("y", {1.0f, 2.0f, 3.0f, 4.0f}), floats("y", {1.0f, 2.5f, nan, 4.0f}), atol_only(0.25));
  EXPECT_EQ(c.elements, 4u);
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.nan_mismatches, 1u);
  EXPECT_DOUBLE_EQ(c.max_abs, 0.5);  // the NaN has no size
  EXPECT_DOUBLE_EQ(c.max_rel, 0.25);
  EXPECT_FALSE(c.faithful());
  EXPECT_EQ(c.describe(), "output 'y': 2 of 4 elements differ, 1 with NaN (max abs 0.5, max rel 0.25)");
}

TEST(ToleranceTest, TensorComparisonUsesTheElementRuleAtItsBoundary) {
  EXPECT_TRUE(compare_tensors(floats("y", {1.0f}), floats("y", {1.5f}), atol_only(0.5)).faithful());
  EXPECT_FALSE(compare_tensors(floats("y", {1.0f}), floats("y", {1.5f}), atol_only(0.5 - kStep)).faithful());
  // An infinite reference against a finite candidate is a difference, however loose the bounds.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare_tensors(floats("y", {inf}), floats("y", {1.0f}), {1e300, 1e300}).faithful());
  EXPECT_TRUE(compare_tensors(floats("y", {inf}), floats("y", {inf}), Tolerance::exact()).faithful());
}

TEST(ToleranceTest, ShapesTypesAndMissingOutputsAreProblemsBeforeAnyElement) {
  auto other_shape = floats("y", {1.0f, 2.0f});
  other_shape.shape = {2, 1};
  auto c = compare_tensors(floats("y", {1.0f, 2.0f}), other_shape, Tolerance::close());
  EXPECT_FALSE(c.faithful());
  EXPECT_EQ(c.describe(), "output 'y': shapes differ: float32 [2] against float32 [2, 1]");
  // The same rank and the same elements in another layout is another shape: a transposed output.
  auto wide = floats("y", {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
  wide.shape = {2, 3};
  auto tall = wide;
  tall.shape = {3, 2};
  auto transposed = compare_tensors(wide, tall, Tolerance::close());
  EXPECT_FALSE(transposed.shapes_match);
  EXPECT_FALSE(transposed.faithful());
  EXPECT_EQ(transposed.describe(), "output 'y': shapes differ: float32 [2, 3] against float32 [3, 2]");
  auto ints = floats("y", {1.0f});
  ints.type = ElementType::kInt32;
  EXPECT_EQ(compare_tensors(floats("y", {1.0f}), ints, Tolerance::close()).describe(), "output 'y': element types differ: float32 [1] against int32 [1]");
  auto outs = compare_outputs({floats("y", {1.0f}), floats("z", {1.0f})}, {floats("y", {1.0f})}, Tolerance::close());
  EXPECT_FALSE(outs.faithful());
  EXPECT_EQ(outs.first_problem(), "output 'z' missing");
  EXPECT_TRUE(compare_outputs({floats("y", {1.0f})}, {floats("y", {1.0f})}, Tolerance::exact()).faithful());
}

}  // namespace
}  // namespace rung
