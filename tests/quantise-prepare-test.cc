// The graph preparation `rung quantise` makes before placing QDQ: per-channel
// affines folded into convolutions (after them, and into an unpadded one before
// them), divisions by constants made multiplications, hard-sigmoid and
// hard-swish patterns made one operator. Each is checked for its shape and, on
// the real ONNX Runtime, for computing what the original computes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>

#include "graph/onnx_file.h"
#include "graph/model_write.h"
#include "in_process_runtime.h"
#include "model_builder.h"
#include "parity_test_support.h"
#include "quantise/activation_fold.h"
#include "quantise/conv_fold.h"
#include "quantise/opset_upgrade.h"
#include "rung/ladder.h"
#include "rung/tolerance.h"
#include "session/session.h"
#include "test_support.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

std::vector<float> seeded(std::size_t n, std::uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

std::vector<std::string> op_types(const onnx::ModelProto& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  return ops;
}

class PrepareTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto p = test::install_runtime_1_30();
    ASSERT_TRUE(p) << p.error().message;
    process_ = *p;
  }
  void SetUp() override { dir_ = test::make_temp_dir("rung-prepare"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<double> run(const onnx::ModelProto& m, const std::string& name, const std::vector<float>& x, std::vector<std::int64_t> shape) {
    const fs::path file = dir_ / (name + ".onnx");
    EXPECT_TRUE(write_onnx_model(m, file).ok());
    SessionSettings settings;
    settings.rung = *find_rung("cpu");
    auto session = open_session(*process_, file, settings);
    EXPECT_TRUE(session) << session.error().message;
    if (!session) return {};
    auto out = run_session(*session, {test::float_tensor("x", std::move(shape), x)});
    EXPECT_TRUE(out) << out.error().message;
    return out ? out->front().to_doubles() : std::vector<double>{};
  }

  // The folded graph computes what the original does, within Tolerance::close().
  void expect_same(const onnx::ModelProto& original, const onnx::ModelProto& folded, std::vector<std::int64_t> shape) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    const auto x = seeded(n, 7, -4, 4);
    const auto a = run(original, "original", x, shape), b = run(folded, "folded", x, shape);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 + 1e-3 * std::fabs(a[i])) << "element " << i;
  }

  onnx::ModelProto load(test::ModelBuilder& b) {
    auto m = read_onnx_model(b.save(dir_ / "built.onnx"));
    EXPECT_TRUE(m.ok());
    return *m;
  }

  fs::path dir_;
  static inline OrtProcess* process_ = nullptr;
};

// Conv -> Mul(per channel) -> Add(scalar) -> BatchNormalization: all three into the Conv.
TEST_F(PrepareTest, AnAffineAfterAConvFoldsIntoItsWeightsAndBias) {
  test::ModelBuilder b(17);
  b.input("x", {1, 3, 6, 6})
      .initializer("w", {4, 3, 3, 3}, seeded(108, 1))
      .initializer("b", {4}, seeded(4, 2))
      .initializer("scale", {1, 4, 1, 1}, {0.5f, -2.0f, 1.5f, 3.0f})
      .initializer("shift", {1}, {0.25f})
      .initializer("gamma", {4}, {1.0f, 0.5f, 2.0f, 1.0f})
      .initializer("beta", {4}, {0.0f, 0.1f, -0.1f, 0.2f})
      .initializer("mean", {4}, {0.1f, 0.2f, 0.3f, 0.4f})
      .initializer("var", {4}, {1.0f, 2.0f, 0.5f, 1.0f})
      .node("Conv", {"x", "w", "b"}, {"c"})
      .attribute("pads", std::vector<int64_t>{1, 1, 1, 1})
      .node("Mul", {"scale", "c"}, {"m"})
      .node("Add", {"m", "shift"}, {"a"})
      .node("BatchNormalization", {"a", "gamma", "beta", "mean", "var"}, {"y"})
      .output("y", {1, 4, 6, 6});
  const auto original = load(b);
  auto folded = original;
  const ConvFolds f = fold_into_convolutions(*folded.mutable_graph());
  EXPECT_EQ(f.batch_norms, 1);
  EXPECT_EQ(f.affines, 2);
  EXPECT_THAT(op_types(folded), ElementsAre("Conv"));
  EXPECT_EQ(folded.graph().node(0).output(0), "y");
  expect_same(original, folded, {1, 3, 6, 6});
}

// Mul -> Add -> Conv without padding: into the Conv's weights and bias. A padded
// Conv would see its zero padding shifted by the Add, so it keeps them.
TEST_F(PrepareTest, AnAffineBeforeAnUnpaddedConvFoldsAndBeforeAPaddedOneStays) {
  for (const bool padded : {false, true}) {
    test::ModelBuilder b(17);
    b.input("x", {1, 3, 5, 5})
        .initializer("w", {2, 3, padded ? 3 : 1, padded ? 3 : 1}, seeded(padded ? 54 : 6, 3))
        .initializer("scale", {1}, {0.75f})
        .initializer("shift", {3, 1, 1}, {0.5f, -1.0f, 2.0f})
        .node("Relu", {"x"}, {"r"})  // so that the affine's input is no graph input
        .node("Mul", {"r", "scale"}, {"m"})
        .node("Add", {"m", "shift"}, {"a"})
        .node("Conv", {"a", "w"}, {"y"});
    if (padded) b.attribute("pads", std::vector<int64_t>{1, 1, 1, 1});
    b.output("y", {1, 2, 5, 5});
    const auto original = load(b);
    auto folded = original;
    const ConvFolds f = fold_into_convolutions(*folded.mutable_graph());
    if (padded) {
      EXPECT_EQ(f.total(), 0);
      EXPECT_THAT(op_types(folded), ElementsAre("Relu", "Mul", "Add", "Conv"));
    } else {
      EXPECT_EQ(f.affines, 2);
      EXPECT_THAT(op_types(folded), ElementsAre("Relu", "Conv"));
      EXPECT_EQ(folded.graph().node(1).input(0), "r");
    }
    expect_same(original, folded, {1, 3, 5, 5});
  }
}

// A Conv output read twice, or a constant that is not one value per channel, is left alone.
TEST_F(PrepareTest, AnAffineIsNotFoldedWhenTheConvOutputHasAnotherReaderOrTheConstantSpansMoreThanChannels) {
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 4, 4})
      .initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("w2", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("rowwise", {1, 1, 4, 1}, {1, 2, 3, 4})
      .initializer("two", {1}, {2.0f})
      .node("Conv", {"x", "w"}, {"c"})
      .node("Mul", {"c", "two"}, {"m"})
      .node("Add", {"c", "m"}, {"s"})  // c is read twice
      .node("Conv", {"s", "w2"}, {"c2"})
      .node("Mul", {"c2", "rowwise"}, {"y"})  // one value per row, not per channel
      .output("y", {1, 2, 4, 4});
  auto m = load(b);
  EXPECT_EQ(fold_into_convolutions(*m.mutable_graph()).total(), 0);
  EXPECT_THAT(op_types(m), ElementsAre("Conv", "Mul", "Add", "Conv", "Mul"));
}

// x * Clip(x + 3, 0, 6) / 6, as exporters spell it, becomes one HardSwish; Clip(x + 3, 0, 6) / 6 alone a HardSigmoid.
TEST_F(PrepareTest, HardSwishAndHardSigmoidSpelledOutBecomeOneOperatorEach) {
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 3, 3})
      .initializer("three", {1}, {3.0f})
      .initializer("zero", {}, {0.0f})
      .initializer("six", {}, {6.0f})
      .initializer("six_div", {1}, {6.0f})
      .node("Add", {"x", "three"}, {"a"})
      .node("Clip", {"a", "zero", "six"}, {"c"})
      .node("Mul", {"x", "c"}, {"m"})
      .node("Div", {"m", "six_div"}, {"hswish"})
      .node("Add", {"hswish", "three"}, {"a2"})
      .node("Clip", {"a2", "zero", "six"}, {"c2"})
      .node("Div", {"c2", "six_div"}, {"hsig"})
      .node("Div", {"hsig", "three"}, {"y"})  // a plain division by a constant
      .output("y", {1, 2, 3, 3});
  const auto original = load(b);
  auto folded = original;
  const ActivationFolds f = fold_activations(*folded.mutable_graph(), 17);
  EXPECT_EQ(f.hard_swishes, 1);
  EXPECT_EQ(f.hard_sigmoids, 1);
  EXPECT_EQ(f.divisions, 3);
  EXPECT_THAT(op_types(folded), ElementsAre("HardSwish", "HardSigmoid", "Mul"));
  expect_same(original, folded, {1, 2, 3, 3});
  // Below opset 14 there is no HardSwish: x * HardSigmoid(x) stays two nodes.
  auto old = original;
  const ActivationFolds f13 = fold_activations(*old.mutable_graph(), 13);
  EXPECT_EQ(f13.hard_swishes, 0);
  EXPECT_EQ(f13.hard_sigmoids, 2);
}

// A pattern with one constant changed (x + 2, or a clip at 5) is another function and is left as it is.
TEST_F(PrepareTest, APatternWithAnotherConstantIsNotAHardSwish) {
  for (const auto& [add, top] : {std::pair{2.0f, 6.0f}, std::pair{3.0f, 5.0f}}) {
    test::ModelBuilder b(17);
    b.input("x", {1, 4})
        .initializer("add", {1}, {add})
        .initializer("zero", {}, {0.0f})
        .initializer("top", {}, {top})
        .initializer("six", {1}, {6.0f})
        .node("Add", {"x", "add"}, {"a"})
        .node("Clip", {"a", "zero", "top"}, {"c"})
        .node("Mul", {"x", "c"}, {"m"})
        .node("Div", {"m", "six"}, {"y"})
        .output("y", {1, 4});
    auto m = load(b);
    const ActivationFolds f = fold_activations(*m.mutable_graph(), 17);
    EXPECT_EQ(f.hard_swishes + f.hard_sigmoids, 0) << add << " " << top;
    EXPECT_EQ(f.divisions, 1);
    EXPECT_THAT(op_types(m), ElementsAre("Add", "Clip", "Mul", "Mul"));
  }
}

}  // namespace
}  // namespace rung
