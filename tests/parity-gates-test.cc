// Every decision gate against the simulated accelerator: without its
// perturbation knob the candidate computes what the CPU computes and each gate
// passes; with it each gate fails, and the report says how many decisions moved
// beside how many there were.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "model_builder.h"
#include "parity_test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

class ParityGatesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-parity-gates"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path gate(const std::string& json) {
    const fs::path p = dir_ / "gate.json";
    test::write_text(p, json);
    return p;
  }

  // The same model on the CPU and on the simulated EP, `perturb` added by every claimed node.
  test::CommandResult run(const fs::path& model, const fs::path& gate_file, const std::string& inputs, double perturb) {
    const std::string options = perturb != 0 ? ",option.perturb=" + std::to_string(perturb) : "";
    return test::parity("--ref " + test::side(model) + " --cand " + test::sim_ep_side(model, options) + " --gate '" + gate_file.string() +
                        "' " + inputs + " --out-json '" + (dir_ / "report.json").string() + "'");
  }

  nlohmann::json report() { return nlohmann::json::parse(test::read_text(dir_ / "report.json")); }

  // Passes clean, fails perturbed; returns the perturbed run's stdout.
  std::string expect_pass_then_fail(const fs::path& model, const std::string& gate_json, const std::string& inputs, double perturb) {
    const fs::path g = gate(gate_json);
    auto clean = run(model, g, inputs, 0);
    EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
    EXPECT_THAT(clean.out, HasSubstr("PASS")) << clean.out;
    EXPECT_TRUE(report()["passed"].get<bool>());
    auto perturbed = run(model, g, inputs, perturb);
    EXPECT_EQ(perturbed.exit_code, 1) << perturbed.out << perturbed.err;
    EXPECT_THAT(perturbed.out, HasSubstr("FAIL")) << perturbed.out;
    EXPECT_FALSE(report()["passed"].get<bool>());
    return perturbed.out;
  }

  // y = |x - 0.5| (* scale): uniform random inputs put many values near every decision boundary.
  fs::path distance_model(const std::string& name, const std::vector<int64_t>& shape, float scale = 1.0f) {
    test::ModelBuilder b;
    b.input("x", shape).initializer("half", {}, {0.5f}).node("Sub", {"x", "half"}, {"d"});
    if (scale != 1.0f) {
      b.initializer("scale", {}, {scale}).node("Abs", {"d"}, {"a"}).node("Mul", {"a", "scale"}, {"y"});
    } else {
      b.node("Abs", {"d"}, {"y"});
    }
    b.output("y", shape);
    return b.save(dir_ / (name + ".onnx"));
  }

  fs::path dir_;
};

TEST_F(ParityGatesTest, Classification) {
  const auto model = distance_model("classifier", {1, 10});
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "classification", "output": "y", "activation": "softmax",
      "top_k": 3, "threshold": 0.11}]})", "--random 40 --seed 7", 0.1);
  EXPECT_THAT(out, ContainsRegex("40 vs 40 items; top-1 changed on [1-9][0-9]*"));
  EXPECT_THAT(out, ContainsRegex("at threshold 0.11: [0-9]+ vs [0-9]+ above, [0-9]+ decisions? changed"));
  EXPECT_GT(report()["gates"][0]["stats"]["lost"].get<int>() + report()["gates"][0]["stats"]["gained"].get<int>(), 0);
}

TEST_F(ParityGatesTest, FixedSlotDetection) {
  // Scores [1, 16 slots, 4 classes] and boxes per slot, DETR-style.
  test::ModelBuilder b;
  b.input("x", {1, 16, 4}).input("b", {1, 16, 4}).initializer("half", {}, {0.5f}).initializer("eight", {}, {8.0f}).initializer("zero", {}, {0.0f});
  b.node("Sub", {"x", "half"}, {"d"}).node("Abs", {"d"}, {"a"}).node("Mul", {"a", "eight"}, {"logits"}).node("Add", {"b", "zero"}, {"boxes"});
  b.output("logits", {1, 16, 4}).output("boxes", {1, 16, 4});
  const auto model = b.save(dir_ / "detr.onnx");
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "slots", "output": "logits", "boxes": "boxes",
      "activation": "sigmoid", "threshold": 0.9, "min_box_iou": 0.9}]})", "--random 20 --seed 3", 0.1);
  EXPECT_THAT(out, ContainsRegex("[0-9]+ vs [0-9]+ detections in 320 slots at threshold 0.9, [0-9]+ decisions? changed \\("));
  const auto stats = report()["gates"][0]["stats"];
  EXPECT_EQ(stats["slots"].get<int>(), 320);
  EXPECT_GT(stats["lost"].get<int>() + stats["gained"].get<int>() + stats["class_flips"].get<int>() + stats["boxes_moved"].get<int>(), 0);
}

TEST_F(ParityGatesTest, DetectionAfterNms) {
  // Boxes [1, 24, 4] as x, y, w, h with one score each; kept above 0.5.
  test::ModelBuilder b;
  b.input("b", {1, 24, 4}).input("s", {1, 24}).initializer("half", {}, {0.5f}).initializer("two", {}, {2.0f}).initializer("zero", {}, {0.0f});
  b.node("Add", {"b", "zero"}, {"boxes"}).node("Sub", {"s", "half"}, {"d"}).node("Abs", {"d"}, {"a"}).node("Mul", {"a", "two"}, {"scores"});
  b.output("boxes", {1, 24, 4}).output("scores", {1, 24});
  const auto model = b.save(dir_ / "nms.onnx");
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "scores": "scores",
      "box_format": "xywh", "score_threshold": 0.5, "bands": [0, 0.3, 0.6]}],
      "inputs": {"values": {}}})", "--random 20 --seed 11", 0.1);
  EXPECT_THAT(out, ContainsRegex("[0-9]+ vs [0-9]+ detections, [0-9]+ decisions? changed"));
  EXPECT_THAT(out, HasSubstr("band [0, 0.3) px"));
}

TEST_F(ParityGatesTest, DetectionFromAProbabilityMapPerSizeBand) {
  // p = sigmoid(20 (x - 0.5)): near 1 inside the rectangles drawn into x, near 0 outside.
  test::ModelBuilder b;
  b.input("x", {1, 1, 64, 64}).initializer("half", {}, {0.5f}).initializer("k", {}, {20.0f});
  b.node("Sub", {"x", "half"}, {"d"}).node("Mul", {"d", "k"}, {"z"}).node("Sigmoid", {"z"}, {"p"}).output("p", {1, 1, 64, 64});
  const auto model = b.save(dir_ / "map.onnx");
  fs::create_directories(dir_ / "maps");
  for (int n = 0; n < 3; ++n) {
    std::vector<float> x(64 * 64, 0.0f);
    auto rect = [&](int x0, int y0, int w, int h) {
      for (int y = y0; y < y0 + h; ++y) {
        for (int c = x0; c < x0 + w; ++c) x[static_cast<std::size_t>(y * 64 + c)] = 1.0f;
      }
    };
    rect(2 + n, 2, 30, 6);     // thin: a line of text
    rect(4, 20 + n, 20, 12);   // medium
    rect(36, 30, 24, 24 - n);  // large
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 1, 64, 64}, x), dir_ / "maps" / ("map" + std::to_string(n) + ".pb")).ok());
  }
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "boxes", "output": "p", "bands": [0, 16, 32]}]})",
                                   "--inputs '" + (dir_ / "maps").string() + "'", 0.35);
  // Lifting the whole map over the 0.3 threshold merges everything into one region.
  EXPECT_THAT(out, ContainsRegex("9 vs [0-9] detections, [0-9]+ decisions changed"));
  EXPECT_THAT(out, HasSubstr("band [0, 16) px: 3 vs"));
  EXPECT_THAT(out, HasSubstr("band [16, 32) px: 3 vs"));
  EXPECT_THAT(out, HasSubstr("band [32, inf) px: 3 vs"));
}

TEST_F(ParityGatesTest, Embedding) {
  test::ModelBuilder b;
  b.input("x", {4, 16}).initializer("half", {}, {0.5f}).node("Sub", {"x", "half"}, {"e"}).output("e", {4, 16});
  const auto model = b.save(dir_ / "embedder.onnx");
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "embedding", "output": "e", "cosine": 0.999, "min_fraction": 0.999}]})",
                                   "--random 10 --seed 5", 0.1);
  EXPECT_THAT(out, ContainsRegex("40 vs 40 embeddings, [1-9][0-9]* below cosine 0.999"));
  EXPECT_THAT(out, HasSubstr("p1 "));
}

TEST_F(ParityGatesTest, TextByCtc) {
  const auto model = distance_model("recogniser", {1, 20, 6});
  test::write_text(dir_ / "keys.txt", "a\nb\nc\nd\n");
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "text", "output": "y", "characters": "keys.txt"}]})",
                                   "--random 12 --seed 9", 0.1);
  EXPECT_THAT(out, ContainsRegex("12 vs 12 lines, [1-9][0-9]* lines? changed"));
  EXPECT_THAT(out, ContainsRegex("random [0-9]+: \"[a-d ]*\" vs \"[a-d ]*\" \\([0-9]+ edits?\\)"));
}

TEST_F(ParityGatesTest, Masks) {
  const auto model = distance_model("segmenter", {1, 2, 16, 16});
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "mask", "output": "y", "threshold": 0.3, "min_iou": 0.9}]})",
                                   "--random 5 --seed 2", 0.1);
  EXPECT_THAT(out, ContainsRegex("10 masks \\(0 empty on both sides, not counted\\), [1-9][0-9]* below IoU 0.9"));
}

TEST_F(ParityGatesTest, TensorGateWithItsNumbers) {
  const auto model = distance_model("plain", {1, 10});
  auto out = expect_pass_then_fail(model, R"({"gates": [{"decoder": "tensor", "atol": 1e-4, "rtol": 1e-3, "pass_rate": 0.9}]})",
                                   "--random 10", 0.01);
  EXPECT_THAT(out, HasSubstr("0 of 10 inputs within atol 1.00e-04 AND rtol 0.001"));
  EXPECT_THAT(out, ContainsRegex("abs error max 0.0[0-9]+ mean 0.0[0-9]+ median ≈0.0[0-9]+ p99 ≈0.0[0-9]+"));
  EXPECT_THAT(out, HasSubstr("NaN 0 ref / 0 cand, Inf 0 ref / 0 cand"));
  EXPECT_THAT(out, ContainsRegex("would pass at atol 0.0[0-9]+ \\(rtol 0.001\\)"));
}

}  // namespace
}  // namespace rung
