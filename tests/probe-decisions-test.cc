// Decisions that hold: a rung is taken only on evidence that its provider ran the
// model (ONNX Runtime's profile), and the verdict does not flip on noise. Each
// rule runs 20 probes in a row on tiny models, with few runs, and must give the
// same answer every time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "in_process_runtime.h"
#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/probe.h"
#include "rung/software_gpu.h"
#include "session/placement.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::HasSubstr;

constexpr const char* kSimRung = "rung_sim_ep";
constexpr int kProbes = 20;

const RungOutcome* find(const ProbeOutcome& o, const std::string& rung) {
  for (const auto& r : o.rungs) {
    if (r.rung == rung) return &r;
  }
  return nullptr;
}

// y = Relu(x · W): nearly all the time in a MatMul the simulated accelerator does
// not claim, so its rung runs as fast as the CPU: a tie by construction.
fs::path write_matmul_relu_model(const fs::path& path) {
  constexpr int64_t kRows = 64, kSide = 192;
  test::ModelBuilder b;
  b.input("x", {kRows, kSide})
      .initializer("w", {kSide, kSide}, std::vector<float>(kSide * kSide, 0.01f))
      .node("MatMul", {"x", "w"}, {"m"})
      .node("Relu", {"m"}, {"y"})
      .output("y", {kRows, kSide});
  return b.save(path);
}

// y = x · W1 · W2 · W3, every MatMul taken by the simulated accelerator. With its
// `memoise` knob it computes each once and then copies the output while the
// inputs stay the same (the probe feeds the same inputs on every run), where the
// CPU multiplies 50 MFLOP a run: clearly faster by construction, and faithful.
class ProbeDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-decisions");
    test::make_plugin_dir(dir_);
    elementwise_ = test::write_elementwise_model(dir_ / "elementwise.onnx", {1, 16, 64});
    tie_ = write_matmul_relu_model(dir_ / "matmul_relu.onnx");
    chain_ = test::write_matmul_chain_model(dir_ / "matmul_chain.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // In process, so that twenty probes stay fast; the same job code the worker runs.
  ProbeOptions options(const fs::path& model) {
    ProbeOptions o;
    o.cache_dir = dir_ / "cache";
    o.models = {{model.stem().string(), model, {}}};
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.isolate = false;
    o.reprobe = true;
    o.probe_runs = 3;
    o.time_budget_s = 0.3;
    o.probe_deadline = std::chrono::seconds(20);
    return o;
  }

  ProbeOutcome probe(const ProbeOptions& o) {
    auto r = run_probe(o);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : ProbeOutcome{};
  }

  const Measurement& sim_measurement(const ProbeOutcome& out) {
    static const Measurement none;
    const auto* sim = find(out, kSimRung);
    EXPECT_NE(sim, nullptr);
    if (sim == nullptr || sim->models.empty()) return none;
    return sim->models[0];
  }

  fs::path dir_, elementwise_, tie_, chain_;
};

TEST(ProfilePlacementTest, CountsDistinctNodesAndKernelTimePerProvider) {
  const fs::path dir = test::make_temp_dir("rung-profile");
  const fs::path file = dir / "profile.json";
  // As ONNX Runtime writes it: a list of events; a node run twice counts once, its time twice.
  nlohmann::json events = nlohmann::json::array({
      {{"cat", "Session"}, {"name", "model_run"}, {"dur", 900}},
      {{"cat", "Node"}, {"name", "Mul_0_kernel_time"}, {"dur", 100}, {"args", {{"provider", "RungSimAccelerator"}}}},
      {{"cat", "Node"}, {"name", "Mul_0_kernel_time"}, {"dur", 100}, {"args", {{"provider", "RungSimAccelerator"}}}},
      {{"cat", "Node"}, {"name", "Add_1_kernel_time"}, {"dur", 100}, {"args", {{"provider", "RungSimAccelerator"}}}},
      {{"cat", "Node"}, {"name", "Conv_2_kernel_time"}, {"dur", 200}, {"args", {{"provider", "CPUExecutionProvider"}}}},
      {{"cat", "Node"}, {"name", "Conv_2_fence_before"}, {"dur", 5}, {"args", {{"provider", "CPUExecutionProvider"}}}},
  });
  test::write_text(file, events.dump());
  const NodePlacement p = read_profile_placement(file);
  ASSERT_TRUE(p.known);
  EXPECT_EQ(p.total_nodes(), 3);
  EXPECT_EQ(p.accelerated_nodes(), 2);
  EXPECT_DOUBLE_EQ(p.accelerated_time_share(), 0.6);
  EXPECT_EQ(p.accelerated_provider(), "RungSimAccelerator");
  EXPECT_EQ(p.describe(), "RungSimAccelerator ran 2 of 3 nodes, 60% of run time");
  test::write_text(file, "not json");
  EXPECT_FALSE(read_profile_placement(file).known);
  fs::remove_all(dir);
}

// One profile per profiled run: a node in several counts once, its times add up.
TEST(ProfilePlacementTest, SeveralProfilesOfOneSessionCountEachNodeOnceAndAddTheirTimes) {
  const fs::path dir = test::make_temp_dir("rung-profiles");
  auto node = [](const char* name, int us, const char* provider) {
    return nlohmann::json{{"cat", "Node"}, {"name", std::string(name) + "_kernel_time"}, {"dur", us}, {"args", {{"provider", provider}}}};
  };
  test::write_text(dir / "a.json", nlohmann::json::array({node("Mul_0", 100, "RungSimAccelerator"), node("Conv_1", 50, "CPUExecutionProvider")}).dump());
  test::write_text(dir / "b.json", nlohmann::json::array({node("Mul_0", 300, "RungSimAccelerator"), node("Add_2", 50, "CPUExecutionProvider")}).dump());
  test::write_text(dir / "c.json", "damaged");
  const NodePlacement p = read_profile_placement(std::vector<fs::path>{dir / "a.json", dir / "b.json", dir / "c.json"});
  ASSERT_TRUE(p.known) << "a damaged profile beside readable ones leaves them readable";
  EXPECT_EQ(p.total_nodes(), 3);
  EXPECT_EQ(p.accelerated_nodes(), 1);
  EXPECT_DOUBLE_EQ(p.accelerated_time_share(), 0.8);  // 400 of 500
  EXPECT_FALSE(read_profile_placement(std::vector<fs::path>{dir / "c.json"}).known);
  EXPECT_FALSE(read_profile_placement(std::vector<fs::path>{}).known);
  fs::remove_all(dir);
}

// After its timed runs the session runs once more with ONNX Runtime profiling
// that run alone (1.30 can): the placement agrees with a profiled session of the
// model's own, without building the model again, and no profile is left behind.
TEST(ProfilePlacementTest, ARunOfTheBuiltSessionIsProfiledAloneAndAgreesWithASessionOfItsOwn) {
  auto process = test::install_runtime_1_30();
  ASSERT_TRUE(process.ok()) << process.error().message;
  ASSERT_TRUE(runs_profile_alone()) << "ONNX Runtime 1.30 serves API 25 or later";
  const fs::path dir = test::make_temp_dir("rung-profile-alone");
  const fs::path model = test::write_elementwise_model(dir / "elementwise.onnx", {1, 16, 64});
  SessionSettings settings;  // the CPU
  auto opened = open_session(**process, model, settings);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto prepared = prepare_session(std::move(*opened));
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  std::vector<Tensor> inputs;
  for (const auto& in : prepared->io.inputs) inputs.push_back(test::float_tensor(in.name, {1, 16, 64}, std::vector<float>(16 * 64, 0.5f)));
  auto alone = profile_placement(**process, *prepared, model, settings, inputs, dir / "alone", 3);
  auto own = profile_placement(**process, model, settings, inputs, dir / "own", 3);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  ASSERT_TRUE(own.ok()) << own.error().message;
  ASSERT_TRUE(alone->known);
  EXPECT_EQ(alone->total_nodes(), own->total_nodes());
  EXPECT_EQ(alone->total_nodes(), 4);
  ASSERT_EQ(alone->providers.size(), 1u);
  EXPECT_EQ(alone->providers[0].provider, kCpuProvider);
  EXPECT_GT(alone->providers[0].kernel_us, 0);
  EXPECT_TRUE(fs::is_empty(dir / "alone")) << "each run's profile is read and removed";
  // The session still runs as before: profiling was this run's alone.
  EXPECT_TRUE(run_session(*prepared, inputs).ok());
  fs::remove_all(dir);
}

TEST_F(ProbeDecisionsTest, AProviderThatTakesNoNodeIsNotPlacedOnEveryProbe) {
  ScopedEnv ops("RUNG_SIM_EP_OPS", "Sqrt");  // the model has no Sqrt: the simulated EP claims nothing
  auto o = options(elementwise_);
  o.acceptance_ratio = 1000;  // the clock would admit it: only placement can refuse it
  for (int i = 0; i < kProbes; ++i) {
    const auto out = probe(o);
    const Measurement& m = sim_measurement(out);
    ASSERT_EQ(m.verdict, Verdict::kNotPlaced) << "probe " << i << ": " << m.reason;
    EXPECT_EQ(out.chosen, "cpu");
    if (i == 0) {
      EXPECT_TRUE(m.placement_known);
      EXPECT_EQ(m.placed_nodes, 0);
      EXPECT_EQ(m.total_nodes, 4);
      EXPECT_THAT(m.reason, HasSubstr("CPUExecutionProvider ran 4 of 4 nodes"));
      EXPECT_THAT(out.about_line(), HasSubstr("rung_sim_ep not placed"));
      EXPECT_THAT(out.to_json(), HasSubstr("\"verdict\": \"not placed\""));
    }
  }
}

TEST_F(ProbeDecisionsTest, ThePlacedShareIsReadFromTheProfileAndHeldToTheThreshold) {
  ScopedEnv ops("RUNG_SIM_EP_OPS", "Mul");  // one node of four
  auto o = options(elementwise_);
  o.acceptance_ratio = 1000;
  o.min_placed_share = 0.25;  // at the share: placed
  auto out = probe(o);
  const Measurement& m = sim_measurement(out);
  EXPECT_EQ(m.verdict, Verdict::kTaken) << m.reason;
  EXPECT_EQ(m.placed_nodes, 1);
  EXPECT_EQ(m.total_nodes, 4);
  EXPECT_GT(m.placed_time_share, 0);
  EXPECT_LT(m.placed_time_share, 1);
  EXPECT_THAT(m.placement, HasSubstr("RungSimAccelerator ran 1 of 4 nodes, "));
  const auto json = nlohmann::json::parse(out.to_json());
  EXPECT_EQ(json["rungs"][0]["models"][0]["placement"]["placed_nodes"], 1);
  EXPECT_THAT(json["inputs"].get<std::string>(), HasSubstr("not of the decisions a model makes"));

  o.min_placed_share = 0.26;  // just above it: not placed
  out = probe(o);
  EXPECT_EQ(sim_measurement(out).verdict, Verdict::kNotPlaced);
  EXPECT_THAT(sim_measurement(out).reason, HasSubstr("at least 26% of the nodes"));

  ScopedEnv all("RUNG_SIM_EP_OPS", "Mul,Add,Sub,Relu");  // every node
  o.min_placed_share = 1.0;
  out = probe(o);
  EXPECT_EQ(sim_measurement(out).verdict, Verdict::kTaken) << sim_measurement(out).reason;
  EXPECT_EQ(sim_measurement(out).placed_nodes, 4);
}

TEST_F(ProbeDecisionsTest, WebGpuPlacementIsReadTheSameWayOnTheSoftwareAdapter) {
  test::LentSoftwareGpu lavapipe;
  if (!lavapipe.skip_reason().empty()) GTEST_SKIP() << lavapipe.skip_reason();
  auto o = options(elementwise_);
  o.plugin_dirs.clear();
  o.isolate = true;  // the adapter is lent to the workers only
  o.acceptance_ratio = 1000;
  o.probe_deadline = std::chrono::seconds(120);  // a first run on lavapipe compiles its shaders
  const auto out = probe(o);
  const auto* webgpu = find(out, "webgpu");
  ASSERT_NE(webgpu, nullptr) << "ONNX Runtime 1.30.0 carries WebGPU";
  ASSERT_NE(webgpu->verdict, Verdict::kFailed) << webgpu->reason;
  EXPECT_EQ(webgpu->display, "WebGPU on lavapipe (software)");
  ASSERT_FALSE(webgpu->models.empty());
  const Measurement& m = webgpu->models[0];
  EXPECT_TRUE(m.placement_known);
  EXPECT_GT(m.placed_nodes, 0) << m.placement;
  EXPECT_THAT(m.placement, HasSubstr("WebGpuExecutionProvider ran "));
}

TEST_F(ProbeDecisionsTest, ATieKeepsTheFloorOnEveryProbe) {
  ScopedEnv delay("RUNG_SIM_EP_COMPUTE_DELAY_US", "1");  // a token delay: the Relu it computes is a sliver of the run
  auto o = options(tie_);
  for (int i = 0; i < kProbes; ++i) {
    const auto out = probe(o);
    const Measurement& m = sim_measurement(out);
    ASSERT_EQ(out.chosen, "cpu") << "probe " << i << ": " << verdict_name(m.verdict) << " " << m.reason;
    ASSERT_TRUE(m.verdict == Verdict::kSlowerWithinNoise || m.verdict == Verdict::kSlower) << verdict_name(m.verdict);
    EXPECT_EQ(m.placed_nodes, 1);  // placed: the tie is on the clock
    EXPECT_GE(m.pairs, 8);
  }
}

TEST_F(ProbeDecisionsTest, AClearlyFasterAcceleratorIsTakenOnEveryProbe) {
  ScopedEnv ops("RUNG_SIM_EP_OPS", "MatMul");
  ScopedEnv memoise("RUNG_SIM_EP_MEMOISE", "1");
  auto o = options(chain_);  // the default acceptance ratio: it must be faster than the floor
  ASSERT_EQ(o.acceptance_ratio, 1.0);
  for (int i = 0; i < kProbes; ++i) {
    o.cache_dir = dir_ / ("cache-" + std::to_string(i));  // a fresh cache: every probe measures
    const auto out = probe(o);
    const Measurement& m = sim_measurement(out);
    ASSERT_EQ(out.chosen, kSimRung) << "probe " << i << ": " << verdict_name(m.verdict) << " " << m.reason;
    EXPECT_EQ(m.verdict, Verdict::kTaken);
    EXPECT_LT(m.ratio_high, 1.0 - o.min_gain) << m.reason;
    EXPECT_EQ(m.placed_nodes, 3);
    EXPECT_EQ(m.total_nodes, 3);
  }
}

TEST_F(ProbeDecisionsTest, AnAcceleratorClearlyWithinTheAcceptanceRatioIsTakenOnEveryProbe) {
  auto o = options(tie_);
  o.acceptance_ratio = 3.0;  // it costs about the CPU's time: well under 3x less the minimum gain
  for (int i = 0; i < kProbes; ++i) {
    const auto out = probe(o);
    const Measurement& m = sim_measurement(out);
    ASSERT_EQ(out.chosen, kSimRung) << "probe " << i << ": " << verdict_name(m.verdict) << " " << m.reason;
    EXPECT_LT(m.ratio_high, 2.85);
  }
}

// The bar is the acceptance ratio less the minimum gain the probe is given, not
// its default: the same tie, taken under 3x less 5%, is within noise under 3x
// less 90% (a bar of 0.3x, far under what a tie measures).
TEST_F(ProbeDecisionsTest, TheMinimumGainGivenSetsTheBarARungMustPass) {
  auto o = options(tie_);
  o.acceptance_ratio = 3.0;
  o.min_gain = 0.9;
  const auto out = probe(o);
  const Measurement& m = sim_measurement(out);
  EXPECT_EQ(out.chosen, "cpu") << verdict_name(m.verdict) << " " << m.reason;
  // A slow build of the accelerator (an instrumented one) can measure past 3x itself: slower, but never taken.
  ASSERT_TRUE(m.verdict == Verdict::kSlowerWithinNoise || m.verdict == Verdict::kSlower) << verdict_name(m.verdict) << " " << m.reason;
  if (m.verdict == Verdict::kSlowerWithinNoise) {
    EXPECT_THAT(m.reason, HasSubstr("lies under 0.3× (the acceptance ratio 3× less 90%)"));
  }
}

TEST_F(ProbeDecisionsTest, AClearlySlowerAcceleratorIsSlowerNotWithinNoise) {
  ScopedEnv delay("RUNG_SIM_EP_COMPUTE_DELAY_US", "20000");
  const auto out = probe(options(elementwise_));
  const Measurement& m = sim_measurement(out);
  EXPECT_EQ(m.verdict, Verdict::kSlower) << m.reason;
  EXPECT_GT(m.ratio_low, 1.0);
  EXPECT_THAT(m.reason, HasSubstr("paired runs"));
}

}  // namespace
}  // namespace rung
