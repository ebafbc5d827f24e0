// The rules `rung quantise` places and corrects by, each at its boundary and one
// input at a time: which node a target quantises (a grouped convolution kept
// float, a Clip folded only when its bounds hold zero, a ConvTranspose on the
// CPU, a hard activation fed by a float tensor), which device each form is for,
// and how a rounded weight's shift is measured and taken off a bias (a Gemm's
// beta, a bias two nodes share, a MatMul of more than two dimensions).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "graph/onnx_file.h"
#include "graph/tensor_data.h"
#include "in_process_runtime.h"
#include "model_builder.h"
#include "parity/inputs.h"
#include "parity_test_support.h"
#include "quantise_fixture.h"
#include "quantise/bias_correction.h"
#include "quantise/opset_upgrade.h"
#include "quantise/qdq.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::initializer;
using test::node_writing;

class QuantiseRulesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-quantise-rules"); }
  void TearDown() override { fs::remove_all(dir_); }

  // The builder's model with its shapes inferred, as quantise plans it.
  onnx::ModelProto inferred(const test::ModelBuilder& b, const std::string& name) {
    auto m = read_onnx_model(b.save(dir_ / (name + ".onnx")));
    EXPECT_TRUE(m.ok()) << name;
    if (!m) return {};
    EXPECT_TRUE(infer_shapes(*m).ok()) << name;
    return *m;
  }

  static std::vector<float> values_of(const onnx::ModelProto& m, const std::string& name) {
    const auto* t = initializer(m, name);
    if (t == nullptr) return {};
    auto v = float_values(*t);
    return v ? *v : std::vector<float>{};
  }

  fs::path dir_;
};

// --- placement ----------------------------------------------------------------

// A Conv kept float reads its input through a per-channel DequantizeLinear (so that
// ONNX Runtime's weight pass leaves it alone): one scale per input channel. A
// grouped Conv's weight holds channels per group on its axis 1, so the count is
// that times the groups.
TEST_F(QuantiseRulesTest, AGroupedConvKeptFloatReadsOneScalePerInputChannelOfEveryGroup) {
  for (const std::int64_t group : {std::int64_t{1}, std::int64_t{2}, std::int64_t{4}}) {
    SCOPED_TRACE(group);
    test::ModelBuilder b(17);
    const std::int64_t per_group = 4 / group;
    b.input("x", {1, 4, 3, 3})
        .initializer("w", {4, 4, 1, 1}, std::vector<float>(16, 0.25f))
        .initializer("w2", {4, per_group, 1, 1}, std::vector<float>(static_cast<std::size_t>(4 * per_group), 0.5f))
        .node("Conv", {"x", "w"}, {"c"}, "first")
        .node("Conv", {"c", "w2"}, {"z"}, "kept")
        .attribute("group", group)
        .node("Relu", {"z"}, {"y"})
        .output("y", {1, 4, 3, 3});
    auto model = inferred(b, "grouped-" + std::to_string(group));
    QdqSettings s;
    s.keep_float = {"kept"};
    auto plan = plan_qdq(model, s);
    ASSERT_TRUE(plan.ok()) << plan.error().message;
    std::map<std::string, Range> r;
    for (const auto& t : plan->calibrated()) r[t] = Range{-4, 4};
    ASSERT_TRUE(insert_qdq(model, *plan, *plan->resolve(r), s).ok());
    const auto* kept = node_writing(model, "z");
    ASSERT_NE(kept, nullptr);
    const auto* dq = node_writing(model, kept->input(0));
    ASSERT_NE(dq, nullptr);
    ASSERT_EQ(dq->op_type(), "DequantizeLinear");
    const auto* scale = initializer(model, dq->input(1));
    ASSERT_NE(scale, nullptr);
    EXPECT_THAT(std::vector<std::int64_t>(scale->dims().begin(), scale->dims().end()), ElementsAre(4)) << "the Conv's 4 input channels";
  }
}

// ONNX Runtime's CPU folds a Clip into the integer Conv before it only when the
// quantised range (which always holds zero) can do its clipping: the Clip's
// bounds must hold zero. Each bound alone, at zero and just past it, as opset 11+
// inputs and as opset 10 attributes; a bound computed by the graph is not known.
TEST_F(QuantiseRulesTest, AClipFoldsIntoTheQuantisedConvBeforeItExactlyWhenItsBoundsHoldZero) {
  struct Case {
    const char* what;
    std::vector<float> lo, hi;  // empty: the bound is not given
    bool folds;
  };
  const std::vector<Case> cases = {
      {"[0, 6]", {0.0f}, {6.0f}, true},
      {"[0.001, 6]", {0.001f}, {6.0f}, false},
      {"[-6, 0]", {-6.0f}, {0.0f}, true},
      {"[-6, -0.001]", {-6.0f}, {-0.001f}, false},
      {"no lower bound, 6", {}, {6.0f}, true},
      {"no lower bound, -1", {}, {-1.0f}, false},
      {"1, no upper bound", {1.0f}, {}, false},
      {"-1, no upper bound", {-1.0f}, {}, true},
  };
  for (const bool as_attributes : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.what) + (as_attributes ? " as attributes (opset 10)" : " as inputs (opset 17)"));
      test::ModelBuilder b(as_attributes ? 10 : 17);
      b.input("x", {1, 2, 3, 3}).initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1}).node("Conv", {"x", "w"}, {"c"}, "conv");
      if (as_attributes) {
        b.node("Clip", {"c"}, {"y"}, "clip");
        if (!c.lo.empty()) b.attribute("min", c.lo[0]);
        if (!c.hi.empty()) b.attribute("max", c.hi[0]);
      } else {
        if (!c.lo.empty()) b.initializer("lo", {}, c.lo);
        if (!c.hi.empty()) b.initializer("hi", {}, c.hi);
        b.node("Clip", {"c", c.lo.empty() ? "" : "lo", c.hi.empty() ? "" : "hi"}, {"y"}, "clip");
      }
      b.output("y", {1, 2, 3, 3});
      auto model = inferred(b, "clip");
      auto plan = plan_qdq(model, {});
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      EXPECT_EQ(plan->folded.count("clip"), c.folds ? 1u : 0u);
      EXPECT_EQ(plan->by_op.at("Clip").folded, c.folds ? 1u : 0u);
      if (!c.folds) {
        EXPECT_THAT(plan->by_op.at("Clip").reasons, ElementsAre(HasSubstr("not right after a quantised node it can fold into")));
      }
    }
  }
  // A lower bound the graph computes is not known to hold zero.
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 3, 3})
      .input("bound", {})
      .initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("hi", {}, {6.0f})
      .node("Conv", {"x", "w"}, {"c"}, "conv")
      .node("Neg", {"bound"}, {"lo"})
      .node("Clip", {"c", "lo", "hi"}, {"y"}, "clip")
      .output("y", {1, 2, 3, 3});
  auto model = inferred(b, "computed");
  auto plan = plan_qdq(model, {});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->folded.count("clip"), 0u);
}

// ONNX Runtime 1.30's CPU has no integer ConvTranspose: after a quantised Conv it
// still runs float there, and an NPU, which has one, quantises it.
TEST_F(QuantiseRulesTest, AConvTransposeRunsFloatOnTheCpuAndQuantisedOnAnNpu) {
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 4, 4})
      .initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("w2", {2, 3, 2, 2}, std::vector<float>(24, 0.5f))
      .node("Conv", {"x", "w"}, {"c"}, "conv")
      .node("ConvTranspose", {"c", "w2"}, {"z"}, "up")
      .node("Relu", {"z"}, {"y"})
      .output("y", {1, 3, 5, 5});
  auto model = inferred(b, "transpose");
  auto cpu = plan_qdq(model, {});
  ASSERT_TRUE(cpu.ok()) << cpu.error().message;
  EXPECT_EQ(cpu->quantised.count("up"), 0u);
  EXPECT_EQ(cpu->by_op.at("ConvTranspose").float_nodes, 1u);
  EXPECT_THAT(cpu->by_op.at("ConvTranspose").reasons, ElementsAre("no quantised ConvTranspose kernel on the CPU"));
  EXPECT_EQ(cpu->quantised.count("conv"), 1u);  // the Conv before it is quantised: the ConvTranspose alone is the rule
  QdqSettings npu;
  npu.target = QdqTarget::kNpu;
  auto on_npu = plan_qdq(model, npu);
  ASSERT_TRUE(on_npu.ok()) << on_npu.error().message;
  EXPECT_EQ(on_npu->quantised.count("up"), 1u);
  EXPECT_EQ(on_npu->by_op.at("ConvTranspose").quantised, 1u);
}

// On the CPU a HardSwish or HardSigmoid runs as a saturating integer Add (and a
// Mul), which pays only where its input is already quantised: fed by a float
// tensor it stays float; fed by a quantised Conv it is quantised.
TEST_F(QuantiseRulesTest, AHardActivationFedByAFloatTensorStaysFloatAndFedByAQuantisedOneIsQuantised) {
  for (const std::string op : {"HardSwish", "HardSigmoid"}) {
    for (const bool after_conv : {false, true}) {
      SCOPED_TRACE(op + (after_conv ? " after a quantised Conv" : " after a float Exp"));
      test::ModelBuilder b(17);
      b.input("x", {1, 2, 3, 3})
          .initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1})
          .initializer("w2", {2, 2, 1, 1}, {0, 1, 1, 0})
          .node(after_conv ? "Conv" : "Exp", after_conv ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"a"}, "before")
          .node(op, {"a"}, {"h"}, "hard")
          .node("Conv", {"h", "w2"}, {"y"}, "after")
          .output("y", {1, 2, 3, 3});
      auto model = inferred(b, "hard");
      auto plan = plan_qdq(model, {});
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      EXPECT_EQ(plan->quantised.count("hard"), after_conv ? 1u : 0u);
      if (!after_conv) {
        EXPECT_EQ(plan->by_op.at(op).float_nodes, 1u);
        EXPECT_THAT(plan->by_op.at(op).reasons, ElementsAre(HasSubstr("no input is quantised")));
      }
      EXPECT_EQ(plan->quantised.count("after"), 1u);  // a Conv pays for its own conversion either way
    }
  }
}

// int8 and w8 are made to be faster on the CPU that scores them (and refused there
// when slower); the 16-bit forms are for an NPU.
TEST(QuantisedFormTargetTest, EachFormIsPlacedForTheDeviceItIsMadeFor) {
  EXPECT_EQ(default_qdq_target(NumericForm::kInt8), QdqTarget::kCpu);
  EXPECT_EQ(default_qdq_target(NumericForm::kW8), QdqTarget::kCpu);
  EXPECT_EQ(default_qdq_target(NumericForm::kA16W8), QdqTarget::kNpu);
  EXPECT_EQ(default_qdq_target(NumericForm::kA16W16), QdqTarget::kNpu);
}

// --- bias correction ----------------------------------------------------------------

// A Gemm adds beta x C: a shift s is taken off as s / beta. No beta is beta 1;
// beta 0 adds no C, so there is nothing to correct.
TEST_F(QuantiseRulesTest, AGemmsBiasTakesOffItsShiftDividedByBeta) {
  struct Case {
    const char* what;
    std::vector<float> beta;  // empty: no attribute
    std::vector<float> expected;
    std::size_t corrected;
  };
  const std::vector<double> shift = {0.2, 0.4, -0.6};
  for (const Case& c : {Case{"no beta", {}, {0.8f, 1.6f, 3.6f}, 1}, Case{"beta 2", {2.0f}, {0.9f, 1.8f, 3.3f}, 1},
                        Case{"beta 0.5", {0.5f}, {0.6f, 1.2f, 4.2f}, 1}, Case{"beta 0", {0.0f}, {1.0f, 2.0f, 3.0f}, 0}}) {
    SCOPED_TRACE(c.what);
    test::ModelBuilder b(17);
    b.input("x", {1, 2})
        .initializer("w", {2, 3}, std::vector<float>(6, 0.5f))
        .initializer("bias", {3}, {1.0f, 2.0f, 3.0f})
        .node("Gemm", {"x", "w", "bias"}, {"y"}, "gemm");
    if (!c.beta.empty()) b.attribute("beta", c.beta[0]);
    b.output("y", {1, 3});
    auto model = inferred(b, "gemm");
    const BiasCorrection done = correct_biases(model, {{"gemm", shift}});
    EXPECT_EQ(done.nodes, c.corrected);
    EXPECT_EQ(done.uncorrected, 1 - c.corrected);
    const auto bias = values_of(model, "bias");
    ASSERT_EQ(bias.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(bias[i], c.expected[i], 1e-6) << "channel " << i;
  }
}

// A bias is corrected only where it is this node's own: one two nodes read would
// take both shifts, each wrong for the other, so it is left as it is; a bias of
// one value broadcast over the channels cannot take a per-channel shift either.
TEST_F(QuantiseRulesTest, ABiasTwoNodesShareOrOneValueForEveryChannelIsLeftAsItIs) {
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 3, 3})
      .initializer("w1", {2, 2, 1, 1}, {1, 0, 0, 1})
      .initializer("w2", {2, 2, 1, 1}, {0, 1, 1, 0})
      .initializer("w3", {2, 2, 1, 1}, {1, 1, 0, 1})
      .initializer("w4", {2, 2, 1, 1}, {1, 1, 1, 1})
      .initializer("shared", {2}, {1.0f, 2.0f})
      .initializer("own", {2}, {1.0f, 2.0f})
      .initializer("broadcast", {1}, {5.0f})
      .node("Conv", {"x", "w1", "shared"}, {"a"}, "first")
      .node("Conv", {"x", "w2", "shared"}, {"b"}, "second")
      .node("Conv", {"x", "w3", "own"}, {"c"}, "third")
      .node("Conv", {"x", "w4", "broadcast"}, {"d"}, "fourth")
      .node("Sum", {"a", "b", "c", "d"}, {"y"})
      .output("y", {1, 2, 3, 3});
  auto model = inferred(b, "shared");
  const std::vector<double> shift = {0.5, -0.25};
  const BiasCorrection done = correct_biases(model, {{"first", shift}, {"second", shift}, {"third", shift}, {"fourth", shift}});
  EXPECT_EQ(done.nodes, 1u);
  EXPECT_EQ(done.uncorrected, 3u);
  EXPECT_THAT(values_of(model, "shared"), ElementsAre(1.0f, 2.0f));
  EXPECT_THAT(values_of(model, "broadcast"), ElementsAre(5.0f));
  EXPECT_THAT(values_of(model, "own"), ElementsAre(0.5f, 2.25f));
}

// A MatMul's bias is the Add of constants right after it, when that Add alone reads
// it; a Conv without a bias is given one holding the shift taken off zero.
TEST_F(QuantiseRulesTest, AMatMulsBiasIsTheAddAfterItAndAConvWithoutOneIsGivenOne) {
  for (const bool second_reader : {false, true}) {
    SCOPED_TRACE(second_reader ? "the MatMul's output read twice" : "the Add alone reads the MatMul");
    test::ModelBuilder b(17);
    b.input("x", {1, 2})
        .initializer("w", {2, 2}, {1, 0, 0, 1})
        .initializer("bias", {2}, {1.0f, 1.0f})
        .node("MatMul", {"x", "w"}, {"m"}, "mm");
    // The other reader first: the Add is still the last node to read the MatMul.
    if (second_reader) b.node("Relu", {"m"}, {"r"}).output("r", {1, 2});
    b.node("Add", {"m", "bias"}, {"y"});
    b.output("y", {1, 2});
    auto model = inferred(b, "matmul");
    const BiasCorrection done = correct_biases(model, {{"mm", {0.25, -0.5}}});
    EXPECT_EQ(done.nodes, second_reader ? 0u : 1u);
    EXPECT_THAT(values_of(model, "bias"), second_reader ? ElementsAre(1.0f, 1.0f) : ElementsAre(0.75f, 1.5f));
  }
  test::ModelBuilder b(17);
  b.input("x", {1, 2, 3, 3}).initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1}).node("Conv", {"x", "w"}, {"y"}, "conv").output("y", {1, 2, 3, 3});
  auto model = inferred(b, "conv");
  const BiasCorrection done = correct_biases(model, {{"conv", {0.25, -0.5}}});
  EXPECT_EQ(done.nodes, 1u);
  const auto* conv = node_writing(model, "y");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->input_size(), 3);
  EXPECT_THAT(values_of(model, conv->input(2)), ElementsAre(-0.25f, 0.5f));
}

// The shift is measured per output channel. A MatMul's channels are its last
// axis whatever its rank: on [1, 3, 4] x [4, 2] the two columns, not the three
// rows of axis 1. Weights rounded up by 0.1 in column 0 and down by 0.2 in
// column 1 (summed over the inner axis) on an input of ones shift the columns by
// exactly that, on the real ONNX Runtime.
TEST_F(QuantiseRulesTest, AMatMulOfMoreThanTwoDimensionsIsShiftedAlongItsLastAxis) {
  auto process = test::install_runtime_1_30();
  ASSERT_TRUE(process.ok()) << process.error().message;
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{1, 3, 4}, std::vector<std::int64_t>{2, 1, 3, 4},
                                                 std::vector<std::int64_t>{3, 4}}) {
    SCOPED_TRACE(shape.size());
    std::vector<std::int64_t> out_shape = shape;
    out_shape.back() = 2;
    const std::vector<float> w = {0.5f, -0.5f, 0.25f, 0.75f, -1.0f, 1.0f, 0.0f, 2.0f};
    std::vector<float> w_rounded = w;
    for (std::size_t k = 0; k < 4; ++k) w_rounded[k * 2] += 0.025f, w_rounded[k * 2 + 1] -= 0.05f;
    test::ModelBuilder b(17);
    b.input("x", shape).initializer("w", {4, 2}, w).node("MatMul", {"x", "w"}, {"y"}, "mm").output("y", out_shape);
    const auto prepared = inferred(b, "mm-" + std::to_string(shape.size()));
    onnx::ModelProto rounded = prepared;
    onnx::TensorProto& r = *rounded.mutable_graph()->add_initializer();
    r = *initializer(prepared, "w");
    r.set_name("w_rounded");
    set_float_values(r, w_rounded);
    rounded.mutable_graph()->mutable_node(0)->set_input(1, "w_rounded");

    const fs::path cal = dir_ / ("cal-" + std::to_string(shape.size()));
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    fs::create_directories(cal);
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", shape, std::vector<float>(n, 1.0f)), cal / "one.pb").ok());
    auto listed = InputItems::listed(cal);
    ASSERT_TRUE(listed.ok()) << listed.error().message;
    std::vector<InputItem> items;
    for (std::size_t i = 0; i < listed->size(); ++i) items.push_back(listed->at(i));
    auto shifts = measure_rounding_shifts(**process, prepared, rounded, {"mm"}, items, {}, 1, dir_);
    ASSERT_TRUE(shifts.ok()) << shifts.error().message;
    ASSERT_EQ(shifts->size(), 1u);
    EXPECT_EQ(shifts->front().node, "mm");
    ASSERT_EQ(shifts->front().mean.size(), 2u) << "one shift per column";
    EXPECT_NEAR(shifts->front().mean[0], 0.1, 1e-5);
    EXPECT_NEAR(shifts->front().mean[1], -0.2, 1e-5);
  }
}

}  // namespace
}  // namespace rung
