// rung quantise and rung upgrade: the statistics, the QDQ rewrite, the opset
// upgrade and its proof, and the command end to end on small models built
// here, with real ONNX Runtime sessions scoring every decision.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <random>
#include <set>

#include "quantise/conv_fold.h"
#include "graph/model_file.h"
#include "graph/onnx_file.h"
#include "graph/tensor_data.h"
#include "quantise/opset_upgrade.h"
#include "model_builder.h"
#include "parity_test_support.h"
#include "quantise/calibration.h"
#include "quantise/histogram.h"
#include "quantise/island_search.h"
#include "in_process_runtime.h"
#include "quantise/proof.h"
#include "quantise/qdq.h"
#include "quantise_fixture.h"
#include "rung/hardware.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;

// --- statistics ---------------------------------------------------------------

TEST(TensorStatsTest, MinMaxIsExactAndAlwaysHoldsZero) {
  TensorStats s;
  s.add(std::vector<float>{1.5f, 2.0f, 3.25f});
  EXPECT_EQ(s.min(), 1.5);
  EXPECT_EQ(s.max(), 3.25);
  EXPECT_EQ(s.minmax().lo, 0.0);  // zero must quantise exactly
  EXPECT_EQ(s.minmax().hi, 3.25);
  s.add(std::vector<float>{-0.5f});
  EXPECT_EQ(s.minmax().lo, -0.5);
}

TEST(TensorStatsTest, NonFiniteValuesAreCountedAndLeftOutOfTheRange) {
  TensorStats s(64);
  std::vector<float> v(100, 1.0f);
  v[3] = NAN;
  v[50] = INFINITY;
  v[97] = -INFINITY;
  v[10] = -2.0f;
  s.add(v);
  EXPECT_EQ(s.non_finite(), 3u);
  EXPECT_EQ(s.count(), 97u);
  EXPECT_EQ(s.min(), -2.0);
  EXPECT_EQ(s.max(), 1.0);
}

TEST(TensorStatsTest, PercentileCutsEachTailButNotTheBody) {
  TensorStats s(2048);
  std::vector<float> v;
  for (int i = 0; i < 100000; ++i) v.push_back(static_cast<float>(i % 1000) / 1000.0f);  // [0, 1)
  v.push_back(1000.0f);  // one outlier in 100001
  s.add(v);
  EXPECT_EQ(s.max(), 1000.0);
  const Range r = s.percentile(99.99);  // cuts 5 values from each tail: the outlier goes
  EXPECT_LT(r.hi, 2.0);
  EXPECT_GE(r.hi, 0.99);
  EXPECT_EQ(s.percentile(100).hi, 1000.0);
}

TEST(TensorStatsTest, AGrowingRangeMergesBinsWithoutLosingACount) {
  TensorStats s(128);
  s.add(std::vector<float>(1000, 0.5f));
  EXPECT_DOUBLE_EQ(s.histogram_limit(), 0.5 * (1 + 1e-6) + std::numeric_limits<double>::min());
  s.add(std::vector<float>(10, 3.0f));  // past the first input's range: the width doubles until it fits
  EXPECT_GT(s.histogram_limit(), 3.0);
  EXPECT_EQ(s.count(), 1010u);
  // 1% of the values sit at 3: the 98th percentile is still the body, the 99.5th reaches them.
  EXPECT_LT(s.percentile(98).hi, 1.0);
  EXPECT_GT(s.percentile(99.5).hi, 2.9);
  EXPECT_EQ(s.bins(), 128u);  // fixed memory, however many inputs
}

TEST(TensorStatsTest, EntropyClipsRareOutliersButKeepsTheBody) {
  std::mt19937 g(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(200000);
  for (auto& x : v) x = normal(g);
  v[0] = 40.0f;  // a handful of far outliers
  v[1] = -35.0f;
  TensorStats s(2048);
  s.add(v);
  const Range r = s.entropy(8);
  EXPECT_LT(r.hi, 20.0);
  EXPECT_GT(r.hi, 2.5);
  EXPECT_LT(r.lo, -2.5);
  // With more levels than bins there is nothing to clip for.
  EXPECT_EQ(s.entropy(16).hi, s.max());
}

// A ReLU's output, or a page's blank margin after a convolution: mostly exact
// zeros, the signal in the few values above them. The zeros must not pull the
// edge down onto the signal.
TEST(TensorStatsTest, EntropyIsNotMovedByASpikeOfZeros) {
  std::mt19937 g(11);
  std::exponential_distribution<float> strokes(0.5f);
  std::vector<float> signal(20000);
  for (auto& x : signal) x = strokes(g);
  TensorStats plain(2048), sparse(2048);
  plain.add(signal);
  sparse.add(signal);
  sparse.add(std::vector<float>(400000, 0.0f));  // 95% zeros
  ASSERT_EQ(plain.max(), sparse.max());
  EXPECT_EQ(sparse.entropy(8).hi, plain.entropy(8).hi);
  EXPECT_GT(sparse.entropy(8).hi, 0.25 * sparse.max());
}

// An asymmetric quantiser spends all 256 levels on a tensor with no negative
// value and about half on each side of a two-sided one: the same magnitudes
// need less clipping when they are one-sided.
TEST(TensorStatsTest, EntropyGivesAOneSidedTensorEveryLevel) {
  std::mt19937 g(5);
  std::student_t_distribution<float> heavy(3.0f);
  std::bernoulli_distribution sign(0.5);
  std::vector<float> one(200000), two(200000);
  for (std::size_t i = 0; i < one.size(); ++i) {
    one[i] = std::fabs(heavy(g));
    two[i] = sign(g) ? -one[i] : one[i];
  }
  TensorStats a(2048), b(2048);
  a.add(one);
  b.add(two);
  EXPECT_GE(a.min(), 0.0);
  EXPECT_GT(a.entropy(8).hi, b.entropy(8).hi);
}

TEST(CalibratorTest, ParsesItsNamesAndRefusesTheRest) {
  EXPECT_EQ(Calibrator::parse("minmax")->method, Calibrator::Method::kMinMax);
  EXPECT_EQ(Calibrator::parse("entropy")->method, Calibrator::Method::kEntropy);
  EXPECT_DOUBLE_EQ(Calibrator::parse("percentile=99.9")->percentile, 99.9);
  EXPECT_DOUBLE_EQ(Calibrator::parse("percentile")->percentile, 99.999);
  EXPECT_FALSE(Calibrator::parse("percentile=abc").ok());
  EXPECT_FALSE(Calibrator::parse("percentile=40").ok());
  EXPECT_FALSE(Calibrator::parse("kl").ok());
}

// --- models -------------------------------------------------------------------

// The classifier and its input sets (tests/quantise_fixture.h, shared with tests/release-flow-test.cc).
using test::write_classifier;
using test::write_images;
using test::initializer;
using test::node_writing;

// Pixel coordinates (x * 640) and scores (sigmoid) joined in one tensor: one scale ruins the scores.
fs::path write_mixed_rows(const fs::path& path) {
  test::ModelBuilder b(17);
  b.input("x", {1, 4})
      .initializer("size", {1}, {640.0f})
      .node("Mul", {"x", "size"}, {"pixels"})
      .node("Sigmoid", {"x"}, {"scores"})
      .node("Concat", {"pixels", "scores"}, {"rows"}, "join")
      .attribute("axis", int64_t{1})
      .output("rows", {1, 8});
  return b.save(path);
}

// Values in [0.5, 1); with `edge`, the first input holds 1.0, so that a calibration set spans what a holdout can hold.
void write_rows_inputs(const fs::path& dir, const std::string& prefix, int count, std::uint32_t seed, bool edge) {
  fs::create_directories(dir);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  for (int i = 0; i < count; ++i) {
    std::vector<float> v(4);
    for (auto& x : v) x = edge && i == 0 ? 1.0f : u(g);
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, v), dir / fmt::format("{}-{:02d}.pb", prefix, i)).ok());
  }
}

onnx::ModelProto load(const fs::path& p) {
  auto m = read_onnx_model(p);
  EXPECT_TRUE(m.ok()) << p;
  return m ? *m : onnx::ModelProto{};
}

// The model at `p` (shapes inferred) and its plan for an NPU, which quantises every op it lists.
std::pair<onnx::ModelProto, Result<QdqPlan>> planned_for_npu(const fs::path& p, QdqSettings& npu) {
  npu.target = QdqTarget::kNpu;
  auto model = load(p);
  EXPECT_TRUE(infer_shapes(model).ok());
  auto plan = plan_qdq(model, npu);
  return {std::move(model), std::move(plan)};
}

float scalar(const onnx::TensorProto& t) {
  if (t.float_data_size() > 0) return t.float_data(0);
  float v = 0;
  std::memcpy(&v, t.raw_data().data(), sizeof v);
  return v;
}

// --- the QDQ rewrite, without running anything -----------------------------------

class QdqTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-qdq");
    model_ = load(write_classifier(dir_ / "c.onnx"));
    ASSERT_TRUE(upgrade_opset(model_, 17).ok());
    ASSERT_EQ(fold_into_convolutions(*model_.mutable_graph()).batch_norms, 1);
    ASSERT_TRUE(infer_shapes(model_).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Ranges for every calibrated tensor: [-1, 3] for the input, [0, 2] for the rest.
  std::map<std::string, Range> ranges(const QdqPlan& plan) {
    std::map<std::string, Range> r;
    for (const auto& t : plan.calibrated()) r[t] = t == "x" ? Range{-1, 3} : Range{0, 2};
    return *plan.resolve(r);
  }

  fs::path dir_;
  onnx::ModelProto model_;
};

TEST_F(QdqTest, PlansEveryFloatTensorAroundQuantisedNodesSharingAndFixingRangesWhereKnown) {
  QdqSettings npu;
  npu.target = QdqTarget::kNpu;
  auto plan = plan_qdq(model_, npu);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->quantised.size(), 6u);  // Conv, Relu, GlobalAveragePool, Flatten, Mul, Softmax
  EXPECT_TRUE(plan->folded.empty());
  EXPECT_EQ(plan->shared.at("flat"), "pool");  // Flatten moves values: its input's scale
  EXPECT_EQ(plan->fixed.at("y").hi, 1.0);      // a softmax is in [0, 1] by construction
  EXPECT_THAT(plan->calibrated(), ElementsAre("x", "bn", "relu", "pool", "logits"));
}

// ONNX Runtime's CPU folds a Relu into the integer convolution before it: the
// tensor between them gets no pair, so no requantisation appears there.
TEST_F(QdqTest, OnTheCpuAReluAfterAQuantisedConvIsFoldedAndTheTensorBetweenThemHasNoPair) {
  auto plan = plan_qdq(model_, {});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_THAT(plan->folded, ElementsAre("Relu_2"));
  EXPECT_EQ(plan->quantised.size(), 6u);
  EXPECT_THAT(plan->calibrated(), ElementsAre("x", "relu", "pool", "logits"));
  EXPECT_EQ(plan->by_op.at("Relu").folded, 1u);
  auto counts = insert_qdq(model_, *plan, ranges(*plan), {});
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  for (const auto& n : model_.graph().node()) {
    if (n.op_type() == "Relu") {
      EXPECT_EQ(n.input(0), "bn");                         // the float output of the Conv
    }
    if (n.op_type() == "QuantizeLinear") {
      EXPECT_NE(n.input(0), "bn") << n.name();  // which no Q reads
    }
  }
}

// The search's ranking, on the QDQ form and the float graph run side by side:
// a Relu folded into the integer Conv before it is kept float together with
// that Conv (alone it would only split the pair and quantise the tensor
// between them, adding error instead of removing it).
TEST_F(QdqTest, TheRankingKeepsAFoldedActivationFloatWithTheNodeItFoldsInto) {
  auto process = test::install_runtime_1_30();
  ASSERT_TRUE(process.ok()) << process.error().message;
  auto plan = plan_qdq(model_, {});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_THAT(plan->folded, ElementsAre("Relu_2"));
  onnx::ModelProto quantised = model_;
  ASSERT_TRUE(insert_qdq(quantised, *plan, ranges(*plan), {}).ok());
  test::write_images(dir_ / "images", "cal", 4, 5, 1.0f);
  auto items = InputItems::listed(dir_ / "images");
  ASSERT_TRUE(items.ok()) << items.error().message;
  std::vector<InputItem> few;
  for (std::size_t i = 0; i < items->size(); ++i) few.push_back(items->at(i));
  auto ranked = rank_node_errors(**process, model_, quantised, *plan, few, {}, 1, dir_);
  ASSERT_TRUE(ranked.ok()) << ranked.error().message;
  std::map<std::string, std::vector<std::string>> keep;
  for (const auto& e : *ranked) keep[e.node] = e.keep_float;
  ASSERT_TRUE(keep.count("Relu_2"));
  EXPECT_THAT(keep.at("Relu_2"), ElementsAre(node_writing(model_, "bn")->name(), "Relu_2"));
  ASSERT_TRUE(keep.count(node_writing(model_, "logits")->name()));  // a node nothing folds into: itself alone
  EXPECT_THAT(keep.at(node_writing(model_, "logits")->name()), ElementsAre(node_writing(model_, "logits")->name()));
}

// Nodes without an integer kernel on the CPU stay float, and elementwise
// kernels are only taken where an input is already quantised: a float run sits
// between one DequantizeLinear in and one QuantizeLinear out.
TEST(QdqPlacementTest, AFloatRunHasOneConversionInAndOneOutAndNoPairBetweenFloatNodes) {
  const auto dir = test::make_temp_dir("rung-qdq-island");
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 4, 4})
      .initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("w2", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("half", {1}, {0.5f})
      .node("Conv", {"x", "w"}, {"c"})
      .node("Exp", {"c"}, {"h"})
      .node("Mul", {"h", "half"}, {"m"})
      .node("Conv", {"m", "w2"}, {"y"})
      .output("y", {1, 2, 4, 4});
  auto model = load(b.save(dir / "m.onnx"));
  ASSERT_TRUE(infer_shapes(model).ok());
  auto plan = plan_qdq(model, {});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->by_op.at("Exp").float_nodes, 1u);
  EXPECT_THAT(plan->by_op.at("Exp").reasons, ElementsAre(HasSubstr("no quantised Exp kernel on the CPU")));
  EXPECT_EQ(plan->by_op.at("Mul").float_nodes, 1u);  // its input comes from the float Exp
  EXPECT_THAT(plan->activations, ElementsAre("x", "c", "m", "y"));  // not "h": both its ends are float
  std::map<std::string, Range> r;
  for (const auto& t : plan->calibrated()) r[t] = Range{-1, 1};
  ASSERT_TRUE(insert_qdq(model, *plan, *plan->resolve(r), {}).ok());
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == "Exp") {
      EXPECT_EQ(n.input(0), "c_dq");  // the one conversion in: what the integer Conv computed
    }
  }
  // The NPU quantises the same nodes all: a pair on every tensor.
  QdqSettings npu;
  auto [again, all] = planned_for_npu(dir / "m.onnx", npu);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->quantised.size(), 4u);
  fs::remove_all(dir);
}

// Conv -> HardSwish (h) -> HardSigmoid (g; alpha 0.25, beta 0.4) -> Mul (h g) -> Conv -> Relu: the two activations
// ONNX Runtime's CPU has no integer kernel for, one after a quantised node.
fs::path write_hard_activations(const fs::path& path) {
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 6, 6})
      .initializer("w", {2, 2, 1, 1}, {1.0f, 0.25f, -0.5f, 1.0f})
      .initializer("w2", {2, 2, 1, 1}, {0.5f, -1.0f, 1.0f, 0.75f})
      .node("Conv", {"x", "w"}, {"c"}, "first")
      .node("HardSwish", {"c"}, {"h"}, "swish")
      .node("HardSigmoid", {"h"}, {"g"}, "sigmoid")
      .attribute("alpha", 0.25f)
      .attribute("beta", 0.4f)
      .node("Mul", {"h", "g"}, {"m"}, "gate")
      .node("Conv", {"m", "w2"}, {"z"}, "last")
      .node("Relu", {"z"}, {"y"}, "out")
      .output("y", {1, 2, 6, 6});
  return b.save(path);
}

const onnx::TensorProto& scale_of(const onnx::ModelProto& m, const onnx::NodeProto& n) {
  static const onnx::TensorProto none;
  const onnx::TensorProto* t = initializer(m, n.input(1));
  return t ? *t : none;
}

// HardSigmoid(x) = alpha clip(x + beta / alpha, 0, 1 / alpha): an integer Add
// whose output codes cover exactly [0, 1 / alpha], so that they saturate where
// the clip would, read back at alpha times that scale (the [0, 1] scale of the
// activation); HardSwish is that at alpha 1/6 and an integer Mul by its input.
TEST(QdqPlacementTest, OnTheCpuHardSigmoidAndHardSwishAreAnAddWhoseCodesSaturateAtTheirBoundsAndAMul) {
  const auto dir = test::make_temp_dir("rung-qdq-hard");
  auto model = load(write_hard_activations(dir / "m.onnx"));
  ASSERT_TRUE(infer_shapes(model).ok());
  auto plan = plan_qdq(model, {});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->by_op.at("HardSwish").quantised, 1u);
  EXPECT_EQ(plan->by_op.at("HardSigmoid").quantised, 1u);
  EXPECT_EQ(plan->by_op.at("Mul").quantised, 1u);
  EXPECT_EQ(plan->fixed.at("g").hi, 1.0);  // a hard-sigmoid's range is known
  std::map<std::string, Range> r;
  for (const auto& t : plan->calibrated()) r[t] = Range{-4, 4};
  auto counts = insert_qdq(model, *plan, *plan->resolve(r), {});
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->saturated, 2u);
  for (const auto& n : model.graph().node()) {
    EXPECT_NE(n.op_type(), "HardSwish");
    EXPECT_NE(n.op_type(), "HardSigmoid");
  }
  // HardSwish: c + 3 quantised over [0, 6], read back over [0, 1], times c.
  const auto* shift = node_writing(model, "h_shifted");
  ASSERT_NE(shift, nullptr);
  EXPECT_EQ(shift->op_type(), "Add");
  EXPECT_EQ(shift->input(0), "c_dq");
  const auto* offset = initializer(model, "h_offset_quantized_scale");
  ASSERT_NE(offset, nullptr);
  EXPECT_NEAR(scalar(*offset) * 255, 3.0, 1e-5);  // the constant 3 is the top code
  const auto* q = node_writing(model, "h_gate_q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->input(0), "h_shifted");
  EXPECT_NEAR(scalar(scale_of(model, *q)), 6.0 / 255, 1e-7);
  const auto* dq = node_writing(model, "h_gate");
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->input(0), "h_gate_q");
  EXPECT_NEAR(scalar(scale_of(model, *dq)), 1.0 / 255, 1e-8);
  const auto* mul = node_writing(model, "h");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->op_type(), "Mul");
  EXPECT_THAT(std::vector<std::string>(mul->input().begin(), mul->input().end()), ElementsAre("c_dq", "h_gate"));
  // HardSigmoid at alpha 0.25, beta 0.4: h + 1.6 quantised over [0, 4], and its own output's [0, 1] scale.
  const auto* g_offset = initializer(model, "g_offset_quantized_scale");
  ASSERT_NE(g_offset, nullptr);
  EXPECT_NEAR(scalar(*g_offset) * 255, 1.6, 1e-5);
  const auto* gq = node_writing(model, "g_gate_q");
  ASSERT_NE(gq, nullptr);
  EXPECT_NEAR(scalar(scale_of(model, *gq)), 4.0 / 255, 1e-7);
  const auto* gdq = node_writing(model, "g_dq");
  ASSERT_NE(gdq, nullptr);
  EXPECT_EQ(gdq->input(0), "g_gate_q");
  EXPECT_NEAR(scalar(scale_of(model, *gdq)), 1.0 / 255, 1e-8);
  EXPECT_EQ(node_writing(model, "m")->input(1), "g_dq");  // the gate's Mul reads it
  // The NPU has kernels for both: they stay as they are.
  QdqSettings npu;
  auto [again, all] = planned_for_npu(dir / "m.onnx", npu);
  ASSERT_TRUE(all.ok());
  for (const auto& t : all->calibrated()) r[t] = Range{-4, 4};
  ASSERT_TRUE(insert_qdq(again, *all, *all->resolve(r), npu).ok());
  EXPECT_EQ(node_writing(again, "h")->op_type(), "HardSwish");
  fs::remove_all(dir);
}

// Plans `model` (shapes inferred) for `s` and rewrites it, every calibrated tensor ranging over [-4, 4].
Result<QdqPlan> rewrite_in_fours(onnx::ModelProto& model, const QdqSettings& s) {
  auto plan = plan_qdq(model, s);
  if (!plan) return plan.error();
  std::map<std::string, Range> r;
  for (const auto& t : plan->calibrated()) r[t] = Range{-4, 4};
  auto ranges = plan->resolve(r);
  if (!ranges) return ranges.error();
  if (auto counts = insert_qdq(model, *plan, *ranges, s); !counts) return counts.error();
  return plan;
}

// ONNX Runtime quantises the float weights of a Conv that reads a per-tensor
// DequantizeLinear (int8, one scale for the whole tensor). A Conv kept float
// reads the codes through a DequantizeLinear of its own, one scale per
// channel, which that pass leaves alone.
TEST(QdqPlacementTest, AConvKeptFloatReadsItsInputThroughAPerChannelDequantizeLinear) {
  const auto dir = test::make_temp_dir("rung-qdq-float-conv");
  auto model = load(write_hard_activations(dir / "m.onnx"));
  ASSERT_TRUE(infer_shapes(model).ok());
  QdqSettings s;
  s.keep_float = {"last"};
  auto plan = rewrite_in_fours(model, s);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const auto* last = node_writing(model, "z");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->op_type(), "Conv");
  EXPECT_EQ(last->input(1), "w2");  // float weights
  const auto* dq = node_writing(model, last->input(0));
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->op_type(), "DequantizeLinear");
  EXPECT_EQ(dq->input(0), "m_q");
  const auto* scale = initializer(model, dq->input(1));
  ASSERT_NE(scale, nullptr);
  EXPECT_THAT(std::vector<int64_t>(scale->dims().begin(), scale->dims().end()), ElementsAre(2));  // the Conv's input channels
  ASSERT_EQ(dq->attribute_size(), 1);
  EXPECT_EQ(dq->attribute(0).name(), "axis");
  EXPECT_EQ(dq->attribute(0).i(), 1);
  // The quantised Conv before it reads the shared per-tensor one.
  EXPECT_EQ(node_writing(model, "c")->input(0), "x_dq");
  fs::remove_all(dir);
}

// The same for the other two ops that pass quantises (a ConvTranspose: its
// weight's first axis counts the input channels; a Gemm with transB: the second
// does), and never for an op it leaves alone.
TEST(QdqPlacementTest, AConvTransposeOrGemmKeptFloatReadsAPerChannelDequantizeLinearCountingItsInputChannels) {
  const auto dir = test::make_temp_dir("rung-qdq-float-weighted");
  struct Case {
    std::string op;
    std::int64_t channels;  // 0: no reader of its own
  };
  for (const Case& c : {Case{"ConvTranspose", 2}, Case{"Gemm", 3}, Case{"MatMul", 0}}) {
    SCOPED_TRACE(c.op);
    test::ModelBuilder b(17);
    if (c.op == "ConvTranspose") {
      b.input("x", {1, 2, 4, 4})
          .initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1})
          .initializer("w2", {2, 3, 2, 2}, std::vector<float>(24, 0.5f))
          .node("Conv", {"x", "w"}, {"c"})
          .node("ConvTranspose", {"c", "w2"}, {"z"}, "kept")
          .node("Relu", {"z"}, {"y"})
          .output("y", {1, 3, 5, 5});
    } else {
      const bool gemm = c.op == "Gemm";
      b.input("x", {1, 4})
          .initializer("w", {4, 3}, std::vector<float>(12, 0.25f))
          .initializer("w2", gemm ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2}, std::vector<float>(6, 0.5f))
          .node("MatMul", {"x", "w"}, {"c"})
          .node(c.op, {"c", "w2"}, {"z"}, "kept");
      if (gemm) b.attribute("transB", int64_t{1});
      b.node("Relu", {"z"}, {"y"}).output("y", {1, 2});
    }
    auto model = load(b.save(dir / (c.op + ".onnx")));
    ASSERT_TRUE(infer_shapes(model).ok());
    QdqSettings npu;
    npu.target = QdqTarget::kNpu;
    npu.keep_float = {"kept"};
    auto plan = rewrite_in_fours(model, npu);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    const auto* kept = node_writing(model, "z");
    ASSERT_NE(kept, nullptr);
    const auto* dq = node_writing(model, kept->input(0));
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->op_type(), "DequantizeLinear");
    if (c.channels == 0) {
      EXPECT_EQ(kept->input(0), "c_dq");  // the shared per-tensor one
      continue;
    }
    const auto* scale = initializer(model, dq->input(1));
    ASSERT_NE(scale, nullptr);
    EXPECT_THAT(std::vector<int64_t>(scale->dims().begin(), scale->dims().end()), ElementsAre(c.channels));
    ASSERT_EQ(dq->attribute_size(), 1);
    EXPECT_EQ(dq->attribute(0).i(), 1);
  }
  fs::remove_all(dir);
}

// w8: every weight an int8 initializer behind a Cast to float and a Mul by its
// scales, shaped to broadcast along the weight's channel axis (a Conv's first,
// a ConvTranspose's second, a Gemm with transB its first, a MatMul's last);
// biases, activations and every other node untouched, no QDQ node at all.
TEST(QdqPlacementTest, W8StoresEachWeightAsInt8BehindACastAndAMulAlongItsChannelsAndQuantisesNothingElse) {
  const auto dir = test::make_temp_dir("rung-qdq-w8");
  auto ramp = [](std::size_t n, float step) {
    std::vector<float> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = (static_cast<float>(k % 7) - 3.0f) * step * static_cast<float>(1 + k % 3);
    return v;
  };
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 4, 4})
      .initializer("w_conv", {3, 2, 1, 1}, ramp(6, 0.1f))
      .initializer("w_convt", {3, 2, 1, 1}, ramp(6, 0.3f))
      .initializer("w_gemm", {4, 2}, ramp(8, 0.05f))
      .initializer("b_gemm", {4}, {0.5f, -0.25f, 1.0f, 2.0f})
      .initializer("w_matmul", {4, 3}, ramp(12, 0.2f))
      .node("Conv", {"x", "w_conv"}, {"c"}, "conv")
      .node("ConvTranspose", {"c", "w_convt"}, {"t"}, "convt")
      .node("Relu", {"t"}, {"r"})
      .node("GlobalAveragePool", {"r"}, {"p"})
      .node("Flatten", {"p"}, {"f"})
      .node("Gemm", {"f", "w_gemm", "b_gemm"}, {"g"}, "gemm")
      .attribute("transB", int64_t{1})
      .node("MatMul", {"g", "w_matmul"}, {"y"}, "matmul")
      .output("y", {1, 3});
  const onnx::ModelProto original = load(b.save(dir / "weighted.onnx"));
  struct Expect {
    std::string node, weight;
    std::vector<std::int64_t> scale_dims;
  };
  const std::vector<Expect> expected = {
      {"conv", "w_conv", {3, 1, 1, 1}}, {"convt", "w_convt", {2, 1, 1}}, {"gemm", "w_gemm", {4, 1}}, {"matmul", "w_matmul", {3}}};
  for (bool per_channel : {true, false}) {
    SCOPED_TRACE(per_channel ? "per channel" : "per tensor");
    onnx::ModelProto model = original;
    ASSERT_TRUE(infer_shapes(model).ok());
    QdqSettings s;
    s.form = NumericForm::kW8;
    s.per_channel = per_channel;
    auto plan = plan_qdq(model, s);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    EXPECT_THAT(plan->quantised, ElementsAre("conv", "convt", "gemm", "matmul"));
    EXPECT_TRUE(plan->activations.empty());
    EXPECT_THAT(plan->by_op.at("Relu").reasons, ElementsAre("no weight to store as int8"));
    auto counts = insert_qdq(model, *plan, {}, s);
    ASSERT_TRUE(counts.ok()) << counts.error().message;
    EXPECT_EQ(counts->weights, 4u);
    EXPECT_EQ(counts->activations + counts->biases + counts->constants, 0u);
    for (const auto& n : model.graph().node()) EXPECT_THAT(n.op_type(), Not(HasSubstr("QuantizeLinear"))) << n.name();
    for (const auto& e : expected) {
      SCOPED_TRACE(e.node);
      const onnx::NodeProto* node = nullptr;
      for (const auto& n : model.graph().node()) node = n.name() == e.node ? &n : node;
      ASSERT_NE(node, nullptr);
      const auto* mul = node_writing(model, node->input(1));
      ASSERT_NE(mul, nullptr);
      ASSERT_EQ(mul->op_type(), "Mul");
      const auto* cast = node_writing(model, mul->input(0));
      ASSERT_EQ(cast->op_type(), "Cast");
      ASSERT_EQ(cast->attribute_size(), 1);
      EXPECT_EQ(cast->attribute(0).i(), onnx::TensorProto::FLOAT);
      const auto* codes = initializer(model, cast->input(0));
      const auto* w = initializer(original, e.weight);
      ASSERT_NE(codes, nullptr);
      EXPECT_EQ(codes->data_type(), onnx::TensorProto::INT8);
      EXPECT_EQ(std::vector<int64_t>(codes->dims().begin(), codes->dims().end()), std::vector<int64_t>(w->dims().begin(), w->dims().end()));
      const auto* scale = initializer(model, mul->input(1));
      ASSERT_NE(scale, nullptr);
      const std::vector<int64_t> dims(scale->dims().begin(), scale->dims().end());
      EXPECT_EQ(dims, per_channel ? e.scale_dims : std::vector<int64_t>{});
      // Each value comes back within half a step of its scale, and the largest of a channel at 127.
      std::vector<float> scales(scale->raw_data().size() / sizeof(float));
      std::memcpy(scales.data(), scale->raw_data().data(), scale->raw_data().size());
      if (scales.empty()) scales.push_back(scalar(*scale));
      const std::vector<float> values = *float_values(*w);
      ASSERT_EQ(codes->raw_data().size(), values.size());
      int top = 0;
      for (std::size_t k = 0; k < values.size(); ++k) {
        const int code = static_cast<std::int8_t>(codes->raw_data()[k]);
        top = std::max(top, std::abs(code));
        // Which channel element k is in: the scale's broadcast along the weight's trailing dimensions.
        std::size_t inner = 1;
        for (int d = static_cast<int>(w->dims_size()) - static_cast<int>(dims.size()) + 1; !dims.empty() && d < w->dims_size(); ++d) {
          inner *= static_cast<std::size_t>(w->dims(d));
        }
        const float sc = scales[scales.size() == 1 ? 0 : (k / inner) % scales.size()];
        EXPECT_NEAR(static_cast<float>(code) * sc, values[k], sc / 2 + 1e-7f) << "element " << k;
      }
      EXPECT_EQ(top, 127);
    }
    EXPECT_EQ(node_writing(model, "g")->input(2), "b_gemm") << "the bias stays float";
    // Read back from the file: int8 weights, float arithmetic.
    const fs::path file = dir / "weighted_w8.onnx";
    std::string bytes;
    model.SerializeToString(&bytes);
    test::write_text(file, bytes);
    auto facts = inspect_model_file(file);
    ASSERT_TRUE(facts.ok());
    EXPECT_EQ(facts->form, NumericForm::kW8) << facts->form_evidence;
  }
  // A float graph casting a small int8 constant is still f32: the int8 elements must outweigh the float ones.
  onnx::ModelProto f32 = original;
  auto* small = f32.mutable_graph()->add_initializer();
  small->set_name("steps");
  small->set_data_type(onnx::TensorProto::INT8);
  small->add_dims(2);
  small->set_raw_data(std::string("\x01\x02", 2));
  auto* cast = f32.mutable_graph()->add_node();
  cast->set_op_type("Cast");
  cast->add_input("steps");
  cast->add_output("steps_f");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  std::string bytes;
  f32.SerializeToString(&bytes);
  test::write_text(dir / "casting.onnx", bytes);
  EXPECT_EQ(inspect_model_file(dir / "casting.onnx")->form, NumericForm::kF32);
  fs::remove_all(dir);
}

TEST_F(QdqTest, IslandsKeepNodesFloatByNameByOpTypeAndDownstreamOfATensor) {
  QdqSettings s;
  s.keep_float = {"Relu"};
  auto plan = plan_qdq(model_, s);
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(plan->islands, ElementsAre("Relu_2"));
  s.keep_float.clear();
  s.float_from = {"pool"};
  plan = plan_qdq(model_, s);
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(plan->islands, ElementsAre("Flatten_4", "Mul_5", "Softmax_6"));
  s.float_from = {"no_such_tensor"};
  EXPECT_THAT(plan_qdq(model_, s).error().message, HasSubstr("--float-from no_such_tensor"));
  s.float_from.clear();
  s.keep_float = {"Gemm"};
  EXPECT_THAT(plan_qdq(model_, s).error().message, HasSubstr("--keep-float Gemm: no node"));
}

TEST_F(QdqTest, Int8WeightsArePerChannelSymmetricAndTheBiasIsInt32AtInputTimesWeightScale) {
  auto plan = plan_qdq(model_, {});
  ASSERT_TRUE(plan.ok());
  auto counts = insert_qdq(model_, *plan, ranges(*plan), {});
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->weights, 1u);
  EXPECT_EQ(counts->biases, 1u);
  EXPECT_EQ(counts->constants, 1u);  // the 10 the logits are multiplied by
  const onnx::NodeProto* conv = node_writing(model_, "bn");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->op_type(), "Conv");
  const onnx::NodeProto* wdq = node_writing(model_, conv->input(1));
  ASSERT_EQ(wdq->op_type(), "DequantizeLinear");
  EXPECT_EQ(wdq->domain(), "");
  ASSERT_EQ(wdq->attribute_size(), 1);
  EXPECT_EQ(wdq->attribute(0).name(), "axis");
  EXPECT_EQ(wdq->attribute(0).i(), 0);
  const auto* wq = initializer(model_, wdq->input(0));
  EXPECT_EQ(wq->data_type(), onnx::TensorProto::INT8);
  const auto* wscale = initializer(model_, wdq->input(1));
  ASSERT_EQ(wscale->dims_size(), 1);
  EXPECT_EQ(wscale->dims(0), 3);
  // The bias: int32, one scale per channel = the input's scale x that channel's weight scale.
  const onnx::NodeProto* bdq = node_writing(model_, conv->input(2));
  const auto* bq = initializer(model_, bdq->input(0));
  EXPECT_EQ(bq->data_type(), onnx::TensorProto::INT32);
  const float input_scale = 4.0f / 255.0f;  // x over [-1, 3], uint8
  const auto* bscale = initializer(model_, bdq->input(1));
  std::vector<float> ws(3), bs(3);
  std::memcpy(ws.data(), wscale->raw_data().data(), 12);
  std::memcpy(bs.data(), bscale->raw_data().data(), 12);
  for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(bs[static_cast<std::size_t>(c)], input_scale * ws[static_cast<std::size_t>(c)]);
  // The graph output keeps its name, now written by a DequantizeLinear.
  EXPECT_EQ(node_writing(model_, "y")->op_type(), "DequantizeLinear");
  EXPECT_EQ(node_writing(model_, "y_float")->op_type(), "Softmax");
}

TEST_F(QdqTest, PerTensorWeightsHaveOneScale) {
  auto plan = plan_qdq(model_, {});
  QdqSettings s;
  s.per_channel = false;
  ASSERT_TRUE(insert_qdq(model_, *plan, ranges(*plan), s).ok());
  const onnx::NodeProto* wdq = node_writing(model_, node_writing(model_, "bn")->input(1));
  EXPECT_EQ(wdq->attribute_size(), 0);
  EXPECT_EQ(initializer(model_, wdq->input(1))->dims_size(), 0);
}

TEST_F(QdqTest, SixteenBitTensorsUseTheMicrosoftDomainAndTheFormReadsBackAsAsked) {
  for (NumericForm form : {NumericForm::kInt8, NumericForm::kA16W8, NumericForm::kA16W16}) {
    onnx::ModelProto m = model_;
    auto plan = plan_qdq(m, {});
    QdqSettings s;
    s.form = form;
    ASSERT_TRUE(insert_qdq(m, *plan, ranges(*plan), s).ok());
    const onnx::NodeProto* q = node_writing(m, "relu_q");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->domain(), form == NumericForm::kInt8 ? "" : "com.microsoft") << numeric_form_name(form);
    EXPECT_EQ(initializer(m, q->input(2))->data_type(), form == NumericForm::kInt8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::UINT16);
    const onnx::NodeProto* wdq = node_writing(m, node_writing(m, "bn")->input(1));
    EXPECT_EQ(initializer(m, wdq->input(0))->data_type(), form == NumericForm::kA16W16 ? onnx::TensorProto::INT16 : onnx::TensorProto::INT8);
    // What bench reads from the graph is the form that was asked for.
    const fs::path file = dir_ / fmt::format("{}.onnx", numeric_form_name(form));
    std::string bytes;
    m.SerializeToString(&bytes);
    test::write_text(file, bytes);
    auto facts = inspect_model_file(file);
    ASSERT_TRUE(facts.ok());
    EXPECT_EQ(facts->form, form) << facts->form_evidence;
  }
}

TEST(QdqScaleTest, ABiasTooLargeForInt32RaisesItsChannelsWeightScale) {
  test::ModelBuilder b(17);
  b.input("x", {1, 1, 2, 2})
      .initializer("w", {2, 1, 1, 1}, {1e-6f, 0.5f})
      .initializer("b", {2}, {1e6f, 0.1f})
      .node("Conv", {"x", "w", "b"}, {"y"})
      .output("y", {1, 2, 2, 2});
  const auto dir = test::make_temp_dir("rung-qdq-bias");
  onnx::ModelProto m = load(b.save(dir / "m.onnx"));
  ASSERT_TRUE(infer_shapes(m).ok());
  auto plan = plan_qdq(m, {});
  QdqSettings s;
  s.form = NumericForm::kA16W16;  // the smallest input scale: the bias overflows first here
  auto counts = insert_qdq(m, *plan, *plan->resolve({{"x", {0, 1}}, {"y", {0, 2e6}}}), s);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(counts->raised_scales, 1u);
  fs::remove_all(dir);
}

// --- the upgrade ----------------------------------------------------------------

// Opset 11 with a target shape computed from the input's (Shape, Cast, Concat),
// the pattern exported PP-OCR graphs use, then a Softmax on the last axis.
fs::path write_computed_reshape(const fs::path& path) {
  test::ModelBuilder b(11);
  b.input("x", {-1, 6})
      .node("Shape", {"x"}, {"shape"})
      .node("Cast", {"shape"}, {"shape_f"})
      .attribute("to", int64_t{1})
      .node("Cast", {"shape_f"}, {"shape_i"})
      .attribute("to", int64_t{7})
      .node("Slice", {"shape_i", "zero", "one"}, {"batch"})
      .node("Concat", {"batch", "rest"}, {"target"})
      .attribute("axis", int64_t{0})
      .node("Reshape", {"x", "target"}, {"r"})
      .node("Softmax", {"r"}, {"y"})
      .attribute("axis", int64_t{2})
      .output("y", {-1, 2, 3});
  onnx::ModelProto m = load(b.save(path));
  for (auto [name, values] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{{"zero", {0}}, {"one", {1}}, {"rest", {2, 3}}}) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
  }
  std::string bytes;
  m.SerializeToString(&bytes);
  test::write_text(path, bytes);
  return path;
}

TEST(OpsetUpgradeTest, ARankOnlyAComputedReshapeKnowsLetsTheConverterThrough) {
  const auto dir = test::make_temp_dir("rung-upgrade");
  onnx::ModelProto m = load(write_computed_reshape(dir / "m.onnx"));
  auto u = upgrade_opset(m, 17);
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(u->from, 11);
  EXPECT_EQ(default_opset(m), 17);
  EXPECT_FALSE(upgrade_opset(m, 11).ok());  // only upward
  fs::remove_all(dir);
}

TEST(OpsetUpgradeTest, TheCommandProvesTheUpgradedGraphTheSameBeforeWritingIt) {
  const auto dir = test::make_temp_dir("rung-upgrade-cli");
  write_computed_reshape(dir / "m.onnx");
  auto r = test::run_command(fmt::format("env -u RUNG_ORT_DIR '{}' upgrade '{}' --opset 17 --out '{}' --random 4 --ort '{}'", test::cli_path().string(),
                                         (dir / "m.onnx").string(), (dir / "m17.onnx").string(), test::runtime_dir("1.30.0").string()));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS  tensor"));
  EXPECT_THAT(r.out, HasSubstr("WRITTEN"));
  auto facts = inspect_model_file(dir / "m17.onnx");
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->opset, 17);
  fs::remove_all(dir);
}

TEST(OpsetUpgradeTest, AGraphThatComputesSomethingElseIsNotProvenAndItsOutputIsNamed) {
  const auto dir = test::make_temp_dir("rung-proof");
  auto model = [&](const std::string& name, float k) {
    test::ModelBuilder b(17);
    b.input("x", {1, 4}).initializer("k", {1}, {k}).node("Mul", {"x", "k"}, {"y"}).node("Relu", {"x"}, {"z"}).output("z", {1, 4}).output("y", {1, 4});
    return b.save(dir / name);
  };
  ProofSides sides{test::runtime_dir("1.30.0"), test::worker_path(), std::chrono::seconds(60)};
  auto same = prove_same_computation(model("a.onnx", 2.0f), model("b.onnx", 2.0f), {{}, 3, 0, {}, {}}, sides, dir / "work1");
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_TRUE(same->proven);
  auto other = prove_same_computation(model("a.onnx", 2.0f), model("c.onnx", 2.01f), {{}, 3, 0, {}, {}}, sides, dir / "work2");
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_FALSE(other->proven);
  EXPECT_EQ(other->failing_output, "y");
  fs::remove_all(dir);
}

// --- rung quantise, end to end ------------------------------------------------------

class QuantiseCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-quantise");
    test::write_classifier_sets(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static test::CommandResult quantise(const std::string& args) { return test::quantise(args); }
  static std::string classifier(const std::string& form, const std::string& calibration, const fs::path& out) {
    return test::classifier_quantise_args(dir_, form, calibration, out);
  }
  // The written file reads back as `form`; its report, beside it, follows the schema. Returns the report.
  static nlohmann::json written_as(const fs::path& out, NumericForm form) {
    auto facts = inspect_model_file(out);
    EXPECT_TRUE(facts.ok()) << out;
    if (facts) {
      EXPECT_EQ(facts->form, form) << facts->form_evidence;
    }
    const fs::path report = fs::path(out).replace_extension(".report.json");
    EXPECT_EQ(test::schema_errors(test::schema_path("quantise-report.schema.json"), report), "");
    auto j = nlohmann::json::parse(test::read_text(report));
    if (facts) {
      EXPECT_EQ(j["output"]["sha256"], facts->sha256);
    }
    return j;
  }
  // The classifier in `form`, calibrated on calibration/, written to `out` (its folder made first).
  static test::CommandResult quantise_into(const fs::path& out, const std::string& form, const std::string& extra) {
    fs::create_directories(out.parent_path());
    return quantise(classifier(form, "calibration", out) + " " + extra);
  }

  static inline fs::path dir_;
};

TEST_F(QuantiseCliTest, AFormThatPassesIsWrittenNamedByItsGraphWithAReportTheSchemaAccepts) {
  const fs::path out = dir_ / "out-int8" / "classifier_i8.onnx";
  auto r = quantise_into(out, "int8", "");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("prepare   opset 11 -> 17, 1 BatchNormalization folded, proven the same on 12 inputs"));
  EXPECT_THAT(r.out, HasSubstr("PASS  classification"));
  EXPECT_THAT(r.out, HasSubstr("not a measurement on the NPU"));
  EXPECT_THAT(r.out, ContainsRegex("WRITTEN .*classifier_i8.onnx \\(classifier_i8, sha256 [0-9a-f]{12}\\)"));
  ASSERT_TRUE(fs::exists(dir_ / "out-int8" / "classifier_i8.report.json"));
  const auto j = written_as(out, NumericForm::kInt8);
  EXPECT_EQ(j["decision"], "written");
  EXPECT_EQ(j["output"]["model_id"], "classifier_i8");
  EXPECT_EQ(j["output"]["stable_sha256"], inspect_model_file(out)->stable_sha256);
  EXPECT_EQ(j["source"]["stable_sha256"], inspect_model_file(dir_ / "classifier.onnx")->stable_sha256);
  EXPECT_EQ(j["source"]["sha256"], inspect_model_file(dir_ / "classifier.onnx")->sha256);
  EXPECT_EQ(j["calibration"]["file_sha256"].size(), 12u);
  EXPECT_TRUE(std::is_sorted(j["holdout"]["file_sha256"].begin(), j["holdout"]["file_sha256"].end()));
  EXPECT_EQ(j["preparation"]["proof"]["proven"], true);
  EXPECT_EQ(j["recipe"]["weights"]["scheme"], "symmetric per channel");
  EXPECT_THAT(j["scored_on"]["note"].get<std::string>(), HasSubstr("not a measurement on the accelerator"));
  // This machine's own CPU features, as rung doctor reads them.
  nlohmann::json features = nlohmann::json::object();
  for (const auto& f : quantised_speed_features(detect_hardware("/").cpu)) features[f.id] = f.present;
  EXPECT_EQ(j["scored_on"]["cpu_features"], features);
}

TEST_F(QuantiseCliTest, SixteenBitFormsAreWrittenAndReadBackAsTheirForm) {
  for (auto [form, id] : {std::pair{"a16w8", "classifier_a16w8"}, std::pair{"a16w16", "classifier_a16w16"}}) {
    const fs::path out = dir_ / fmt::format("{}.onnx", id);
    auto r = quantise(classifier(form, "calibration", out) + " --calibrator percentile=99.99");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(fmt::format("({}, sha256", id)));
    EXPECT_EQ(model_id("classifier", inspect_model_file(out)->form), id);
  }
}

TEST_F(QuantiseCliTest, BenchNamesAWrittenFormByItsModelIdOnce) {
  const fs::path out = dir_ / "bench" / "classifier_a16w8.onnx";
  fs::create_directories(out.parent_path());
  ASSERT_EQ(quantise(classifier("a16w8", "calibration", out)).exit_code, 0);
  auto r = test::run_command(fmt::format("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR '{}' bench '{}' --rung cpu --runs 1 --warmup 0 --ort-dir '{}'",
                                         test::cli_path().string(), out.string(), test::runtime_dir("1.30.0").string()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("classifier_a16w8 (classifier_a16w8.onnx, a16w8"));
  EXPECT_THAT(r.out, Not(HasSubstr("a16w8_a16w8")));
}

TEST_F(QuantiseCliTest, AFormMadeTooCoarseIsRefusedAndNothingIsWritten) {
  const fs::path out = dir_ / "coarse" / "classifier_i8.onnx";
  fs::create_directories(out.parent_path());
  auto r = quantise(classifier("int8", "narrow", out) + " --per-tensor --out-json '" + (dir_ / "coarse.json").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, ContainsRegex("FAIL  classification · y: 12 vs 12 items; top-1 changed on [0-9]+ \\([0-9.]+% agree, need 100%\\)"));
  EXPECT_THAT(r.out, HasSubstr("REFUSED   classification · y failed; nothing written"));
  EXPECT_THAT(r.err, HasSubstr("nothing written"));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::is_empty(out.parent_path()));  // no temporary left either
  // The report asked for says why.
  EXPECT_EQ(test::schema_errors(test::schema_path("quantise-report.schema.json"), dir_ / "coarse.json"), "");
  const auto j = nlohmann::json::parse(test::read_text(dir_ / "coarse.json"));
  EXPECT_EQ(j["decision"], "refused");
  EXPECT_EQ(j["output"]["written"], false);
  EXPECT_EQ(j["recipe"]["weights"]["scheme"], "symmetric per tensor");
  EXPECT_THAT(j["failed"], ElementsAre("classification · y"));
}

// Every written form says what it costs on this CPU against the f32 file, and where the time goes.
TEST_F(QuantiseCliTest, TheReportTimesTheFormAgainstTheF32FileAndSplitsItsKernelTime) {
  const fs::path out = dir_ / "timed" / "classifier_i8.onnx";
  auto r = quantise_into(out, "int8", "--speed-runs 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ContainsRegex("speed     [0-9.]+× f32's time on this CPU \\([0-9.]+ vs [0-9.]+ ms a run, median of 3 in turns on "));
  EXPECT_THAT(r.out, ContainsRegex("profiled kernels [0-9.]+ ms \\(f32 [0-9.]+\\): [0-9.]+ ms in [0-9]+ conversions"));
  const auto j = nlohmann::json::parse(test::read_text(fs::path(out).replace_extension(".report.json")));
  EXPECT_EQ(j["speed"]["runs"], 3);
  EXPECT_GT(j["speed"]["quantised"]["conversion_nodes"].get<int>(), 0);
  bool integer_conv = false;
  for (const auto& o : j["speed"]["quantised"]["ops"]) integer_conv = integer_conv || o["op"] == "QLinearConv";
  EXPECT_TRUE(integer_conv) << j["speed"].dump();  // the Conv ran as ONNX Runtime's integer kernel
  auto untimed = quantise(classifier("int8", "calibration", dir_ / "timed" / "untimed.onnx") + " --speed-runs 0");
  ASSERT_EQ(untimed.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::parse(test::read_text(dir_ / "timed" / "untimed.report.json"))["speed"].is_null());
}

// An int8 form placed for the CPU is there to be faster on it. Whether this
// machine calls the 8x8 classifier's form slower is its clock's to say (about
// 1.6x when idle; 1.03x once, under load), so the rule itself is pinned on
// recorded times (SpeedRefusalTest); here each run must do what the verdict its
// own report records asks, whichever it is.
TEST_F(QuantiseCliTest, AnInt8FormIsRefusedExactlyWhenItsOwnTimedRunsCallItSlower) {
  const fs::path out = dir_ / "slow" / "classifier_i8.onnx";
  fs::create_directories(out.parent_path());
  const fs::path report = fs::path(out).replace_extension(".report.json");
  const std::string args = test::classifier_quantise_args(dir_, "int8", "calibration", out, /*allow_slower=*/false) + " --speed-runs 40";
  auto r = quantise(args + " --out-json '" + (dir_ / "slow.json").string() + "'");
  EXPECT_THAT(r.out, HasSubstr("PASS  classification"));  // its gates pass: speed alone can refuse it
  EXPECT_EQ(test::schema_errors(test::schema_path("quantise-report.schema.json"), dir_ / "slow.json"), "");
  auto j = nlohmann::json::parse(test::read_text(dir_ / "slow.json"));
  EXPECT_EQ(j["speed"]["f32_runs_ms"].size(), 40u);
  EXPECT_EQ(j["speed"]["quantised_runs_ms"].size(), 40u);
  EXPECT_EQ(j["speed"]["slower_allowed"], false);
  if (j["speed"]["verdict"] == "slower") {
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, ContainsRegex("slower: [0-9.]+–[0-9.]+× f32's time run by run \\(95% interval of the median\\)"));
    EXPECT_THAT(r.out, ContainsRegex("REFUSED   speed · slower than f32 on this CPU \\([0-9.]+–[0-9.]+× its time\\); --form w8 stores the weights as "
                                     "int8 and keeps float arithmetic failed; nothing written"));
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(j["decision"], "refused");
    EXPECT_GT(j["speed"]["interval"]["low"].get<double>(), 1.0);
  } else {
    EXPECT_EQ(r.exit_code, 0) << "judged " << j["speed"]["verdict"] << ", not slower: nothing refuses it\n" << r.out << r.err;
    EXPECT_THAT(r.out, Not(HasSubstr("REFUSED")));
    EXPECT_EQ(j["decision"], "written");
    EXPECT_TRUE(j["failed"].empty()) << j["failed"].dump();
    fs::remove(out);
  }

  // Allowed: written whatever the clock says, its report saying whether it was slower.
  auto allowed = quantise(args + " --allow-slower");
  ASSERT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  j = nlohmann::json::parse(test::read_text(report));
  EXPECT_EQ(j["decision"], "written");
  EXPECT_EQ(j["speed"]["slower_allowed"], true);
  EXPECT_TRUE(j["failed"].empty());
  EXPECT_EQ(allowed.out.find("; written all the same (--allow-slower)") != std::string::npos, j["speed"]["verdict"] == "slower") << allowed.out;

  // Forced: written; when slower, as a failed form with speed named among what failed.
  fs::remove(out);
  auto forced = quantise(args + " --force");
  j = nlohmann::json::parse(test::read_text(report));
  EXPECT_TRUE(fs::exists(out));
  if (j["speed"]["verdict"] == "slower") {
    EXPECT_EQ(forced.exit_code, 1) << forced.out << forced.err;
    EXPECT_THAT(forced.out, HasSubstr("FORCED"));
    EXPECT_EQ(j["decision"], "forced");
    ASSERT_EQ(j["failed"].size(), 1u);
    EXPECT_THAT(j["failed"][0].get<std::string>(), HasSubstr("speed · slower than f32 on this CPU"));
  } else {
    EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
    EXPECT_EQ(j["decision"], "written");
  }
}

// A w8 form keeps the float graph's arithmetic on int8 weights: ONNX Runtime
// folds each weight's Cast and Mul when it builds the session, so the profile
// holds the f32 file's float kernels and no conversion, and nothing is calibrated.
TEST_F(QuantiseCliTest, AW8FormStoresInt8WeightsThatOnnxRuntimeFoldsAwayLeavingFloatKernels) {
  const fs::path out = dir_ / "w8" / "classifier_w8.onnx";
  auto r = quantise_into(out, "w8", "--speed-runs 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("-> classifier_w8 (w8: float32 activations, int8 symmetric per channel weights, float arithmetic)"));
  EXPECT_THAT(r.out, HasSubstr("calibrate none: no activation is quantised"));
  EXPECT_THAT(r.out, HasSubstr("0 Q/DQ pairs, 1 weights, 0 int32 biases"));
  EXPECT_THAT(r.out, ContainsRegex("WRITTEN .*classifier_w8.onnx \\(classifier_w8, sha256 [0-9a-f]{12}\\)"));
  const auto j = written_as(out, NumericForm::kW8);
  EXPECT_EQ(j["recipe"]["form"], "w8");
  EXPECT_TRUE(j["recipe"]["calibrator"].is_null());
  EXPECT_EQ(j["recipe"]["bias"]["type"], "float32");
  EXPECT_EQ(j["speed"]["quantised"]["conversion_nodes"], 0);
  std::map<std::string, int> f32_nodes, w8_nodes;
  for (const auto& o : j["speed"]["f32"]["ops"]) f32_nodes[o["op"].get<std::string>()] += o["nodes"].get<int>();
  for (const auto& o : j["speed"]["quantised"]["ops"]) w8_nodes[o["op"].get<std::string>()] += o["nodes"].get<int>();
  EXPECT_EQ(w8_nodes.count("Cast"), 0u) << j["speed"].dump();
  EXPECT_EQ(w8_nodes["Mul"], f32_nodes["Mul"]) << "only the graph's own Mul runs: " << j["speed"].dump();
  EXPECT_EQ(w8_nodes["Conv"], 1) << j["speed"].dump();

  // What a w8 form has no use for is a usage error, said before any work.
  auto searched = quantise(classifier("w8", "calibration", dir_ / "w8" / "searched.onnx") + " --search");
  EXPECT_EQ(searched.exit_code, 2) << searched.out << searched.err;
  EXPECT_THAT(searched.err, HasSubstr("--search: a w8 form quantises no activation"));
  auto npu = quantise(classifier("w8", "calibration", dir_ / "w8" / "npu.onnx") + " --target npu");
  EXPECT_EQ(npu.exit_code, 2) << npu.out << npu.err;
  EXPECT_THAT(npu.err, HasSubstr("--target: a w8 form computes in float"));
  for (const char* flag : {"--signed-activations", "--reduce-range"}) {
    auto integer_only = quantise(classifier("w8", "calibration", dir_ / "w8" / "npu.onnx") + " " + flag);
    EXPECT_EQ(integer_only.exit_code, 2) << flag << integer_only.out << integer_only.err;
    EXPECT_THAT(integer_only.err, HasSubstr(std::string(flag) + ": a w8 form's arithmetic is float"));
  }
  EXPECT_FALSE(fs::exists(dir_ / "w8" / "searched.onnx") || fs::exists(dir_ / "w8" / "npu.onnx"));
}

// Asked for a 16-bit form, or for an NPU's placement, the user chose accuracy or a
// target over this CPU's clock: timed and reported, never refused on speed.
TEST_F(QuantiseCliTest, SixteenBitAndNpuFormsAreTimedButNeverRefusedOnSpeed) {
  for (auto [form, target] : {std::pair{"a16w8", "cpu"}, std::pair{"int8", "npu"}}) {
    const std::string extra = fmt::format("{} for the {}", form, target);
    const fs::path out = dir_ / "not-judged" / fmt::format("{}-{}.onnx", form, target);
    fs::create_directories(out.parent_path());
    const std::string args = test::classifier_quantise_args(dir_, form, "calibration", out, /*allow_slower=*/false);
    auto r = quantise(args + fmt::format(" --target {} --speed-runs 40 --calibrator percentile=99.99", target));
    ASSERT_EQ(r.exit_code, 0) << extra << "\n" << r.out << r.err;
    const auto j = nlohmann::json::parse(test::read_text(fs::path(out).replace_extension(".report.json")));
    // Usually judged slower here (an 8x8 model's conversions outweigh its work); never
    // refused whatever the verdict (the rule on recorded times: SpeedRefusalTest).
    EXPECT_EQ(j["decision"], "written") << extra;
    EXPECT_EQ(j["speed"]["quantised_runs_ms"].size(), 40u) << extra;
    EXPECT_TRUE(j["failed"].empty()) << extra;
  }
}

TEST_F(QuantiseCliTest, ForceWritesAFailingFormWithItsFailingReportBesideIt) {
  const fs::path out = dir_ / "forced" / "classifier_i8.onnx";
  fs::create_directories(out.parent_path());
  auto r = quantise(classifier("int8", "narrow", out) + " --force");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FORCED"));
  EXPECT_TRUE(fs::exists(out));
  const auto j = nlohmann::json::parse(test::read_text(dir_ / "forced" / "classifier_i8.report.json"));
  EXPECT_EQ(j["decision"], "forced");
  EXPECT_EQ(j["gates"][0]["passed"], false);
}

TEST_F(QuantiseCliTest, AHoldoutSharingAFileWithTheCalibrationSetIsAnInputError) {
  const fs::path overlap = dir_ / "overlap";
  fs::create_directories(overlap);
  fs::copy_file(dir_ / "holdout" / "hold-00.pb", overlap / "a.pb");
  fs::copy_file(dir_ / "calibration" / "cal-07.pb", overlap / "renamed.pb");  // the same content under another name
  const fs::path out = dir_ / "overlap.onnx";
  auto r = quantise(fmt::format("'{}' --calibration '{}' --holdout '{}' --gate '{}' --out '{}'", (dir_ / "classifier.onnx").string(),
                                (dir_ / "calibration").string(), overlap.string(), (dir_ / "classifier.gate.json").string(), out.string()));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("shares 1 file with the calibration set"));
  EXPECT_THAT(r.err, HasSubstr("renamed.pb"));
  EXPECT_THAT(r.err, HasSubstr("cal-07.pb"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(QuantiseCliTest, UsageErrorsAreExitTwo) {
  const std::string base = classifier("int8", "calibration", dir_ / "never.onnx");
  EXPECT_EQ(quantise(base + " --keep-float NoSuchOp").exit_code, 2);
  EXPECT_EQ(quantise(base + " --calibrator kl").exit_code, 2);
  auto r = quantise(fmt::format("'{}' --form int4 --calibration '{}' --holdout '{}' --gate '{}'", (dir_ / "classifier.onnx").string(),
                                (dir_ / "calibration").string(), (dir_ / "holdout").string(), (dir_ / "classifier.gate.json").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown form 'int4'"));
  EXPECT_FALSE(fs::exists(dir_ / "never.onnx"));
}

// The mixed rows model, its sets and gate in `dir`, quantised for an NPU (which
// quantises the Concat; ONNX Runtime's CPU, with no integer kernel for a Mul of
// the graph's input, would not), the report written to report.json.
// `rung quantise DIR/NAME.onnx` on ONNX Runtime 1.30.0 with DIR's calibration/,
// holdout/ and NAME.gate.json, writing DIR/NAME_i8.onnx (or the form asked) and DIR/report.json.
test::CommandResult quantise_in(const fs::path& dir, const std::string& name, const std::string& extra) {
  return test::run_command(fmt::format("env -u RUNG_ORT_DIR '{}' quantise '{}' --calibration '{}' --holdout '{}' --gate '{}' --out '{}' "
                                       "--ort '{}' --out-json '{}' {}",
                                       test::cli_path().string(), (dir / (name + ".onnx")).string(), (dir / "calibration").string(),
                                       (dir / "holdout").string(), (dir / (name + ".gate.json")).string(), (dir / (name + "_i8.onnx")).string(),
                                       test::runtime_dir("1.30.0").string(), (dir / "report.json").string(), extra));
}

test::CommandResult quantise_rows(const fs::path& dir, const std::string& extra) {
  if (!fs::exists(dir / "rows.onnx")) {
    write_mixed_rows(dir / "rows.onnx");
    write_rows_inputs(dir / "calibration", "cal", 8, 11, true);
    write_rows_inputs(dir / "holdout", "hold", 8, 12, false);
    test::write_text(dir / "rows.gate.json", R"({"gates": [{"decoder": "tensor", "atol": 0.01, "rtol": 0.01}]})");
  }
  return quantise_in(dir, "rows", "--target npu " + extra);
}

TEST(QuantiseHazardTest, AConcatJoiningPixelsAndScoresIsReportedWithTheIslandThatAvoidsIt) {
  const auto dir = test::make_temp_dir("rung-quantise-mixed");
  auto run = [&](const std::string& extra) { return quantise_rows(dir, extra); };
  auto plain = run("");
  EXPECT_EQ(plain.exit_code, 1) << plain.out << plain.err;
  EXPECT_THAT(plain.out, ContainsRegex("HAZARD    mixed ranges at Concat 'join': one 8-bit scale over \\[0, [0-9.]+\\]; 'scores' .* gets [0-9.]+ levels"));
  EXPECT_THAT(plain.out, HasSubstr("keep it float with --keep-float join --float-from rows"));
  auto island = run("--keep-float join --float-from rows");
  EXPECT_EQ(island.exit_code, 0) << island.out << island.err;
  EXPECT_THAT(island.out, Not(HasSubstr("HAZARD")));
  EXPECT_THAT(island.out, HasSubstr("islands   1 node kept float; --keep-float join; --float-from rows"));
  fs::remove_all(dir);
}

// --search: the form as asked fails (the Concat's one scale leaves the scores a
// handful of levels); the other calibrators cannot help, a float island at the
// Concat does, and the fewest nodes that pass are written into the recipe.
// Inputs for write_hard_activations: values in [-bound, bound], past each
// activation's bends (HardSwish's at -3 and 3, the hard-sigmoid's at -1.6 and
// 2.4). The calibration set's are wider than the holdout's, so that no range
// clips a holdout value.
void write_hard_inputs(const fs::path& dir, const std::string& prefix, int count, std::uint32_t seed, float bound) {
  fs::create_directories(dir);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-bound, bound);
  for (int i = 0; i < count; ++i) {
    std::vector<float> v(2 * 6 * 6);
    for (auto& x : v) x = u(g);
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 2, 6, 6}, v), dir / fmt::format("{}-{:02d}.pb", prefix, i)).ok());
  }
}

test::CommandResult quantise_hard(const fs::path& dir, const std::string& gate, const std::string& extra) {
  if (!fs::exists(dir / "hard.onnx")) {
    write_hard_activations(dir / "hard.onnx");
    write_hard_inputs(dir / "calibration", "cal", 8, 21, 6.0f);
    write_hard_inputs(dir / "holdout", "hold", 8, 22, 5.0f);
  }
  test::write_text(dir / "hard.gate.json", gate);
  return quantise_in(dir, "hard", "--allow-slower " + extra);
}

// Run by ONNX Runtime's CPU, the saturating Add and the Mul are its integer
// kernels (no float HardSwish or HardSigmoid, no conversion but the graph's
// own input and output), and the form computes what the float graph does to
// within its 8-bit steps (y spans about 20, a step 0.08; a wrong bound or slope is off by far more).
TEST(QuantiseHardActivationTest, HardSwishAndHardSigmoidRunAsIntegerKernelsAndComputeWhatTheFloatGraphDoes) {
  const auto dir = test::make_temp_dir("rung-quantise-hard");
  auto r = quantise_hard(dir, R"({"gates": [{"decoder": "tensor", "atol": 0.2, "rtol": 0}]})", "--speed-runs 1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("PASS  tensor"));
  const auto j = nlohmann::json::parse(test::read_text(dir / "report.json"));
  EXPECT_EQ(j["graph"]["by_op"]["HardSwish"]["quantised"], 1);
  EXPECT_EQ(j["graph"]["by_op"]["HardSigmoid"]["quantised"], 1);
  EXPECT_EQ(j["graph"]["saturating_activations"], 2);
  EXPECT_THAT(r.out, HasSubstr("; 2 HardSigmoid/HardSwish as an integer Add saturating at their bounds"));
  EXPECT_EQ(test::schema_errors(test::schema_path("quantise-report.schema.json"), dir / "report.json"), "");
  std::set<std::string> ops;
  for (const auto& o : j["speed"]["quantised"]["ops"]) ops.insert(o["op"].get<std::string>());
  EXPECT_THAT(ops, IsSupersetOf({"QLinearAdd", "QLinearMul", "QLinearConv"})) << j["speed"].dump();
  EXPECT_FALSE(ops.count("HardSwish") || ops.count("HardSigmoid") || ops.count("Add")) << j["speed"].dump();
  EXPECT_EQ(j["speed"]["quantised"]["conversion_nodes"], 2) << j["speed"].dump();  // x in, y out
  // The error is the 8-bit steps' and no more: a tenth of the tolerance is refused.
  auto tight = quantise_hard(dir, R"({"gates": [{"decoder": "tensor", "atol": 0.02, "rtol": 0}]})", "--speed-runs 0");
  EXPECT_EQ(tight.exit_code, 1) << tight.out;
  fs::remove_all(dir);
}

// A Conv kept float computes on its float weights, as asked: with 16-bit
// activations, the form's output is within 16-bit steps of the float graph's.
// Before it read a per-channel DequantizeLinear, ONNX Runtime ran it on int8
// per-tensor weights of its own making, 40 dB from the float graph.
TEST(QuantiseHardActivationTest, AConvKeptFloatRunsOnItsFloatWeights) {
  const auto dir = test::make_temp_dir("rung-quantise-float-conv");
  auto r = quantise_hard(dir, R"({"gates": [{"decoder": "tensor", "atol": 0.002, "rtol": 0}]})", "--form a16w16 --keep-float last --speed-runs 0");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::remove_all(dir);
}

// Rounding shifts a channel's mean output when its weights' rounding errors
// share a sign: here 63 weights of 0.0055 each become 1/127 (a step above a
// peak weight of 1), which moves the Conv's first channel by 63 x 0.0024 x
// mean(x), about 0.15, on every input. A w8 form takes that shift off the
// Conv's bias (it has none: it gets one) and the Add after the MatMul, so the
// output is within 0.02 of the float graph's; uncorrected it is 0.15 off. The
// bare MatMul has no bias to correct, and says so.
fs::path write_shifted_by_rounding(const fs::path& path) {
  std::vector<float> w(2 * 64, 0.3f);  // channel 1: one value, rounded exactly
  w[0] = 1.0f;
  for (int k = 1; k < 64; ++k) w[static_cast<std::size_t>(k)] = 0.0055f;
  test::ModelBuilder b(17);
  b.input("x", {1, 64, 2, 2})
      .initializer("w", {2, 64, 1, 1}, w)
      .initializer("eye", {2, 2}, {1.0f, 0.0f, 0.0f, 1.0f})
      .initializer("eye2", {2, 2}, {1.0f, 0.0f, 0.0f, 1.0f})
      .initializer("b", {2}, {0.5f, -0.5f})
      .node("Conv", {"x", "w"}, {"c"}, "conv")
      .node("GlobalAveragePool", {"c"}, {"p"})
      .node("Flatten", {"p"}, {"f"})
      .node("MatMul", {"f", "eye"}, {"m"}, "dense")
      .node("Add", {"m", "b"}, {"y"}, "dense_bias")
      .node("MatMul", {"f", "eye2"}, {"y2"}, "bare")
      .output("y", {1, 2})
      .output("y2", {1, 2});
  return b.save(path);
}

// Values 1 +- 0.01: the mean the correction removes, and little else.
void write_near_one(const fs::path& dir, const std::string& prefix, int count, std::uint32_t seed) {
  fs::create_directories(dir);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.99f, 1.01f);
  for (int i = 0; i < count; ++i) {
    std::vector<float> v(64 * 4);
    for (auto& x : v) x = u(g);
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 64, 2, 2}, v), dir / fmt::format("{}-{:02d}.pb", prefix, i)).ok());
  }
}

TEST(QuantiseW8Test, EachBiasTakesOffTheMeanShiftItsRoundedWeightsCause) {
  const auto dir = test::make_temp_dir("rung-quantise-w8-bias");
  write_shifted_by_rounding(dir / "shifted.onnx");
  write_near_one(dir / "calibration", "cal", 8, 31);
  write_near_one(dir / "holdout", "hold", 8, 32);
  test::write_text(dir / "shifted.gate.json", R"({"gates": [{"decoder": "tensor", "atol": 0.02, "rtol": 0}]})");
  auto r = quantise_in(dir, "shifted", "--form w8 --allow-slower --speed-runs 0");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("measured each rounded node's shift: 2 biases corrected, 1 node without a bias to correct"));
  const auto j = nlohmann::json::parse(test::read_text(dir / "report.json"));
  EXPECT_EQ(j["recipe"]["bias"]["corrected"]["nodes"], 2);
  EXPECT_EQ(j["recipe"]["bias"]["corrected"]["uncorrected"], 1);
  EXPECT_EQ(j["recipe"]["bias"]["corrected"]["inputs"], 8);
  EXPECT_EQ(test::schema_errors(test::schema_path("quantise-report.schema.json"), dir / "report.json"), "");
  // The Conv had no bias and has one now, as float as the rest of the arithmetic.
  const auto written = load(dir / "shifted_i8.onnx");
  const onnx::NodeProto* conv = node_writing(written, "c");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->input_size(), 3);
  const auto* bias = initializer(written, conv->input(2));
  ASSERT_NE(bias, nullptr);
  const std::vector<float> shift = *float_values(*bias);
  ASSERT_EQ(shift.size(), 2u);
  EXPECT_NEAR(shift[0], -63 * (1.0f / 127 - 0.0055f), 0.003f);  // the shift, taken off
  EXPECT_NEAR(shift[1], 0.0f, 1e-6f);                             // channel 1 rounds exactly: nothing to take off
  fs::remove_all(dir);
}

// A form whose hard activations run as saturating integer Adds is tried again,
// calibrator by calibrator, with them float (each is one attempt of its own in
// the report, its two nodes its islands); a model without them is not.
TEST(QuantiseSearchTest, WhereHardActivationsRunAsSaturatingAddsTheSearchAlsoTriesThemFloat) {
  const auto dir = test::make_temp_dir("rung-quantise-search-hard");
  auto r = quantise_hard(dir, R"({"gates": [{"decoder": "tensor", "atol": 0.001, "rtol": 0}]})", "--search --speed-runs 0");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // nothing 8-bit is that close
  const auto j = nlohmann::json::parse(test::read_text(dir / "report.json"));
  std::vector<std::string> hard_float;
  for (const auto& t : j["search"]["tried"]) {
    if (t["what"].get<std::string>().find("HardSigmoid and HardSwish float") == std::string::npos) continue;
    hard_float.push_back(t["calibrator"].get<std::string>());
    EXPECT_EQ(t["float_nodes"], 2) << t.dump();
  }
  EXPECT_THAT(hard_float, ElementsAre("minmax", "percentile", "entropy")) << j["search"].dump();
  const auto rows = test::make_temp_dir("rung-quantise-search-rows");
  EXPECT_THAT(quantise_rows(rows, "--search").out, Not(HasSubstr("HardSwish float")));
  fs::remove_all(rows);
  fs::remove_all(dir);
}

TEST(QuantiseSearchTest, TheSearchFindsTheIslandThatPassesAndWritesItIntoTheRecipe) {
  const auto dir = test::make_temp_dir("rung-quantise-search");
  auto run = [&](const std::string& extra) { return quantise_rows(dir, extra); };
  EXPECT_EQ(run("").exit_code, 1);  // as asked: refused
  auto r = run("--search");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("search    the form as asked failed its gate; a passing form was found"));
  EXPECT_THAT(r.out, ContainsRegex("FAIL as asked +minmax"));
  EXPECT_THAT(r.out, ContainsRegex("PASS 1 worst nodes float"));
  EXPECT_EQ(test::schema_errors(test::schema_path("quantise-report.schema.json"), dir / "report.json"), "");
  const auto j = nlohmann::json::parse(test::read_text(dir / "report.json"));
  EXPECT_EQ(j["decision"], "written");
  EXPECT_EQ(j["search"]["found"], true);
  EXPECT_EQ(j["search"]["tried"][0]["passed"], false);
  EXPECT_EQ(j["search"]["worst_nodes"][0]["node"], "join");  // it writes the graph's output: first
  EXPECT_THAT(j["recipe"]["islands"]["keep_float"], ElementsAre("join"));
  EXPECT_THAT(j["recipe"]["islands"]["float_nodes"], ElementsAre("join"));
  EXPECT_TRUE(fs::exists(dir / "rows_i8.onnx"));
  // The recipe reproduces the form: the island by hand passes as the search's did.
  EXPECT_EQ(run("--keep-float join").exit_code, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung
