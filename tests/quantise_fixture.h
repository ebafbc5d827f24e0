// The small classifier `rung quantise` is tested on, end to end
// (tests/quantise-test.cc), and the release flow starts from
// (tests/release-flow-test.cc): a model built here, its input sets and its gate
// file, and the command that quantises it on ONNX Runtime 1.30.0; and the two
// lookups the quantise tests read a rewritten graph with.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "model_builder.h"
#include "parity_test_support.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung::test {

// Conv (identity-ish centre taps) -> BatchNormalization -> Relu -> GlobalAveragePool
// -> Flatten -> Softmax: which of three channels is bright, at opset 11.
inline std::filesystem::path write_classifier(const std::filesystem::path& path) {
  std::vector<float> w(3 * 3 * 3 * 3, 0.0f);
  std::mt19937 g(3);
  std::uniform_real_distribution<float> noise(-0.02f, 0.02f);
  for (auto& x : w) x = noise(g);
  for (int c = 0; c < 3; ++c) w[static_cast<std::size_t>(((c * 3 + c) * 3 + 1) * 3 + 1)] = 1.0f;  // out c reads in c at the centre
  ModelBuilder b(11);
  b.input("x", {1, 3, 8, 8})
      .initializer("w", {3, 3, 3, 3}, w)
      .initializer("b", {3}, {0.01f, -0.01f, 0.02f})
      .initializer("gamma", {3}, {1.0f, 1.2f, 0.9f})
      .initializer("beta", {3}, {0.0f, 0.05f, -0.05f})
      .initializer("mu", {3}, {0.1f, 0.1f, 0.1f})
      .initializer("var", {3}, {1.0f, 0.8f, 1.2f})
      .node("Conv", {"x", "w", "b"}, {"conv"})
      .attribute("pads", std::vector<int64_t>{1, 1, 1, 1})
      .node("BatchNormalization", {"conv", "gamma", "beta", "mu", "var"}, {"bn"})
      .node("Relu", {"bn"}, {"relu"})
      .node("GlobalAveragePool", {"relu"}, {"pool"})
      .node("Flatten", {"pool"}, {"flat"})
      .node("Mul", {"flat", "ten"}, {"logits"})
      .initializer("ten", {1}, {10.0f})
      .node("Softmax", {"logits"}, {"y"})
      .attribute("axis", int64_t{1})
      .output("y", {1, 3});
  return b.save(path);
}

// Images where channel (i % 3) is bright: `scale` shrinks every value (a narrow set).
inline void write_images(const std::filesystem::path& dir, const std::string& prefix, int count, std::uint32_t seed, float scale) {
  std::filesystem::create_directories(dir);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> bright(0.6f, 1.0f), dim(0.0f, 0.3f);
  for (int i = 0; i < count; ++i) {
    std::vector<float> v(3 * 8 * 8);
    for (int c = 0; c < 3; ++c) {
      for (int k = 0; k < 64; ++k) v[static_cast<std::size_t>(c * 64 + k)] = scale * (c == i % 3 ? bright(g) : dim(g));
    }
    ASSERT_TRUE(write_tensor_file(float_tensor("x", {1, 3, 8, 8}, v), dir / fmt::format("{}-{:02d}.pb", prefix, i)).ok());
  }
}

// Under `dir`: classifier.onnx; calibration/ and holdout/, 12 images each (an
// int8 form calibrated on the first passes the gate); narrow/, 6 images at a
// twentieth of the range (an int8 form calibrated on them fails it); and
// classifier.gate.json: top-1 must agree with f32 on every holdout image.
inline void write_classifier_sets(const std::filesystem::path& dir) {
  write_classifier(dir / "classifier.onnx");
  write_images(dir / "calibration", "cal", 12, 1, 1.0f);
  write_images(dir / "holdout", "hold", 12, 2, 1.0f);
  write_images(dir / "narrow", "narrow", 6, 3, 0.05f);
  write_text(dir / "classifier.gate.json", R"({"gates": [{"decoder": "classification", "output": "y", "activation": "none",
                                                         "top_k": 1, "min_top1": 1.0, "min_topk": 1.0}]})");
}

// `rung quantise ARGS` on ONNX Runtime 1.30.0, away from any RUNG_ORT_DIR of the caller.
inline CommandResult quantise(const std::string& args) {
  return run_command(fmt::format("env -u RUNG_ORT_DIR '{}' quantise {} --ort '{}'", cli_path().string(), args, runtime_dir("1.30.0").string()));
}

// The arguments that quantise the classifier under `dir` (write_classifier_sets) to
// `form`, calibrated on its set `calibration`, scored on holdout/, written to `out`.
// At 8x8 the classifier's int8 form is slower than f32 on any CPU (conversions
// outweigh a 27-tap convolution), which fails it on speed: these tests are about
// its gates, so they allow that (the speed rule has its own tests, without it).
inline std::string classifier_quantise_args(const std::filesystem::path& dir, const std::string& form, const std::string& calibration,
                                            const std::filesystem::path& out, bool allow_slower = true) {
  return fmt::format("'{}' --name classifier --form {} --calibration '{}' --holdout '{}' --gate '{}' --out '{}'{}", (dir / "classifier.onnx").string(),
                     form, (dir / calibration).string(), (dir / "holdout").string(), (dir / "classifier.gate.json").string(), out.string(),
                     allow_slower ? " --allow-slower" : "");
}

// The graph's initializer named `name`, or null.
inline const onnx::TensorProto* initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

// The node whose outputs include `tensor`, or null.
inline const onnx::NodeProto* node_writing(const onnx::ModelProto& m, const std::string& tensor) {
  for (const auto& n : m.graph().node()) {
    for (const auto& o : n.output()) {
      if (o == tensor) return &n;
    }
  }
  return nullptr;
}

}  // namespace rung::test
