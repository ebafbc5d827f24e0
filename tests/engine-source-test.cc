// An engine is compiled from the file its model id names: on a rung that loads
// quantised forms, the quantised form (into a directory of that form), never the
// f32 file under a quantised label. Compiled for real by the simulated
// accelerator through ONNX Runtime 1.30.0's compile API.
#include <gtest/gtest.h>

#include <atomic>

#include "rungs/forms.h"
#include "engine/builder.h"
#include "engine/placement.h"
#include "graph/onnx_file.h"
#include "model_builder.h"
#include "os/file_hash.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

// The elementwise model, its output named `output`: the compiled engine keeps
// its source's graph outputs, so the name says which file it was built from.
fs::path write_model(const fs::path& path, const std::string& output) {
  const std::vector<int64_t> shape{1, 16, 64};
  test::ModelBuilder b;
  b.input("x", shape)
      .initializer("w", shape, std::vector<float>(16 * 64, 0.75f))
      .node("Mul", {"x", "w"}, {"m"})
      .node("Relu", {"m"}, {output})
      .output(output, shape);
  return b.save(path);
}

RungSpec quantised_sim_rung() {
  RungSpec r = plugin_rung("rung_sim_ep", test::sim_ep_path().string());
  r.form = ModelForm::kQuantized;  // as QNN HTP: it loads quantised forms
  return r;
}

class EngineSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-engine-source");
    f32_ = write_model(dir_ / "det.onnx", "y_f32");
    a16w8_ = write_model(dir_ / "det_a16w8.onnx", "y_a16w8");
  }
  void TearDown() override { fs::remove_all(dir_); }

  ModelRegistration det(Role role = Role::kDetector) const { return {"det", role, f32_, {{NumericForm::kA16W8, a16w8_}}, {}, {}}; }

  fs::path dir_, f32_, a16w8_;
};

TEST_F(EngineSourceTest, ARungThatLoadsQuantisedFormsCompilesTheFormItsIdNames) {
  const RungSpec rung = quantised_sim_rung();
  EngineBuildPlan plan;
  auto build = load_runtime_build(test::runtime_dir("1.30.0") / "libonnxruntime.so.1");
  ASSERT_TRUE(build) << build.error().message;
  plan.build = *build;
  plan.rung = rung;
  plan.models = {det()};
  plan.cache_dir = dir_ / "cache";
  plan.worker = test::worker_path();
  const std::atomic<bool> stop{false};
  auto landings = build_engines(plan, nullptr, nullptr, stop);
  ASSERT_EQ(landings.size(), 1u);
  ASSERT_TRUE(landings[0].failure.empty()) << landings[0].failure;
  const fs::path engine = landings[0].file;

  // Its directory is the form's, its name carries the quantised file's hash ...
  EXPECT_EQ(engine.parent_path().filename(), "a16w8");
  auto sha = sha256_of_file(a16w8_);
  ASSERT_TRUE(sha);
  EXPECT_NE(engine.filename().string().find(sha->substr(0, 12)), std::string::npos) << engine;
  // ... and its graph is the quantised file's: the outputs it was compiled with.
  auto compiled = read_onnx_model(engine);
  ASSERT_TRUE(compiled) << compiled.error().message;
  ASSERT_EQ(compiled->graph().output_size(), 1);
  EXPECT_EQ(compiled->graph().output(0).name(), "y_a16w8");

  // Placement then names what ran: the id of the form the engine was compiled from.
  PlacementSnapshot s;
  s.chosen = rung;
  s.below = {*find_rung("cpu")};
  s.engines["det"] = engine;
  auto p = placements(det(), s);
  EXPECT_EQ(p[0].file, engine);
  EXPECT_EQ(model_id("det", p[0].form), "det_a16w8");
}

TEST_F(EngineSourceTest, AnEmbedderAndAnF32RungCompileTheF32File) {
  EXPECT_EQ(engine_source(quantised_sim_rung(), det()), a16w8_);
  EXPECT_EQ(engine_source(quantised_sim_rung(), det(Role::kEmbedder)), f32_);
  EXPECT_EQ(engine_source(plugin_rung("rung_sim_ep", test::sim_ep_path().string()), det()), f32_);
  ModelRegistration plain{"seg", Role::kSegmenter, f32_, {}, {}, {}};
  EXPECT_EQ(engine_source(quantised_sim_rung(), plain), f32_);
}

}  // namespace
}  // namespace rung
