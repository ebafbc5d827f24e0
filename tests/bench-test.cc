// run_bench on the real ONNX Runtime 1.30.0 build with the simulated
// accelerator: each figure produced by a child process, every failure a row,
// every bad input refused before anything is measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "model_builder.h"
#include "rung/bench.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::HasSubstr;

constexpr const char* kSim = "rung_sim_ep";

const BenchRow* find(const BenchModelReport& m, const std::string& rung) {
  for (const auto& r : m.rows) {
    if (r.rung == rung) return &r;
  }
  return nullptr;
}

class BenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-bench");
    test::make_plugin_dir(dir_);
    model_ = test::write_elementwise_model(dir_ / "elementwise.onnx", {1, 16, 64});
  }
  void TearDown() override { fs::remove_all(dir_); }

  BenchOptions options(std::vector<std::string> rungs = {kSim}) {
    BenchOptions o;
    o.models = {{"elementwise", model_, {}}};
    o.rungs = std::move(rungs);
    o.warmup = 1;
    o.runs = 5;
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.deadline = std::chrono::seconds(30);
    return o;
  }

  BenchReport bench(const BenchOptions& o) {
    auto r = run_bench(o);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : BenchReport{};
  }

  fs::path dir_, model_;
};

TEST_F(BenchTest, EveryRowHasItsFiguresFromItsOwnProcess) {
  auto rep = bench(options());
  ASSERT_EQ(rep.models.size(), 1u);
  const auto& m = rep.models[0];
  EXPECT_EQ(m.model_id, "elementwise");
  EXPECT_EQ(m.form, "f32");
  EXPECT_EQ(m.sha256.size(), 64u);
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].rung, "cpu");  // the floor and reference comes first
  EXPECT_EQ(m.rows[1].rung, kSim);
  for (const auto& r : m.rows) {
    SCOPED_TRACE(r.rung);
    ASSERT_TRUE(r.ok) << r.failure_reason;
    EXPECT_EQ(r.latency.count, 5);
    EXPECT_GT(r.latency.min, 0);
    EXPECT_LE(r.latency.min, r.latency.p50);
    EXPECT_LE(r.latency.p50, r.latency.p90);
    EXPECT_LE(r.latency.p90, r.latency.p99);
    EXPECT_LE(r.latency.p99, r.latency.max);
    EXPECT_GT(r.first_run_ms, 0);
    ASSERT_TRUE(r.build_cold_ms.has_value());
    EXPECT_GT(*r.build_cold_ms, 0);
    EXPECT_GT(r.throughput_per_s, 0);
    EXPECT_NEAR(r.throughput_per_s, 1000.0 / r.latency.mean, 1000.0 / r.latency.mean * 1e-6);
    EXPECT_GT(r.peak_rss_mb, 1);
    EXPECT_EQ(r.model_id, "elementwise");
    EXPECT_EQ(r.form, "f32");
    ASSERT_TRUE(r.ratio_to_floor.has_value());
    EXPECT_FALSE(r.provider_version.empty());
  }
  EXPECT_EQ(m.rows[0].match, OutputMatch::kReference);
  EXPECT_DOUBLE_EQ(*m.rows[0].ratio_to_floor, 1.0);
  EXPECT_EQ(m.rows[0].provider_version, "1.30.0");
  EXPECT_FALSE(m.rows[0].build_cached_ms.has_value());  // the CPU compiles no engine
  // The simulated accelerator computes exactly what the CPU does, and says which nodes it ran.
  const auto& sim = m.rows[1];
  EXPECT_EQ(sim.match, OutputMatch::kMatch);
  EXPECT_EQ(sim.max_abs_diff, 0.0);
  EXPECT_EQ(sim.provider_version, "0.1.0");
  EXPECT_THAT(::testing::PrintToString(sim.evidence), HasSubstr("RungSimAccelerator ran"));
  EXPECT_THAT(::testing::PrintToString(m.rows[0].evidence), HasSubstr("CPUExecutionProvider ran 4 nodes"));
  // The placement the probe and parity read too: every node of this model is the accelerator's.
  ASSERT_TRUE(sim.placement.has_value());
  EXPECT_EQ(sim.placement->placed_nodes, 4);
  EXPECT_EQ(sim.placement->total_nodes, 4);
  EXPECT_GT(sim.placement->time_share, 0.5);
  EXPECT_THAT(sim.placement->summary, HasSubstr("RungSimAccelerator ran 4 of 4 nodes, "));
  // The floor's row: what ran on it, every node, by the CPU.
  ASSERT_TRUE(m.rows[0].placement.has_value());
  EXPECT_EQ(m.rows[0].placement->placed_nodes, 4);
  EXPECT_EQ(m.rows[0].placement->total_nodes, 4);
  EXPECT_EQ(m.rows[0].placement->time_share, 1.0);
  // It compiles an engine: a cold build and one from that engine.
  ASSERT_TRUE(sim.build_cached_ms.has_value());
  EXPECT_GT(*sim.build_cached_ms, 0);
  EXPECT_THAT(::testing::PrintToString(sim.evidence), HasSubstr("engine compiled"));
  EXPECT_EQ(m.inputs_described, "x float32 [1, 16, 64] (random)");
}

TEST_F(BenchTest, ColdBuildPaysTheCompileAndTheRatioIsPaired) {
  ScopedEnv delay("RUNG_SIM_EP_COMPILE_DELAY_MS", "300");
  ScopedEnv slow("RUNG_SIM_EP_COMPUTE_DELAY_US", "3000");
  auto rep = bench(options());
  const auto* sim = find(rep.models[0], kSim);
  ASSERT_NE(sim, nullptr);
  ASSERT_TRUE(sim->ok) << sim->failure_reason;
  EXPECT_GE(*sim->build_cold_ms, 300);
  // 4 claimed nodes, 3 ms each: far slower than the CPU's microseconds.
  EXPECT_GE(sim->latency.p50, 12);
  EXPECT_GT(*sim->ratio_to_floor, 10);
}

TEST_F(BenchTest, PerturbedAcceleratorIsLabelledAsComputingSomethingElse) {
  ScopedEnv perturb("RUNG_SIM_EP_PERTURB", "0.5");
  auto rep = bench(options());
  const auto* sim = find(rep.models[0], kSim);
  ASSERT_NE(sim, nullptr);
  ASSERT_TRUE(sim->ok);
  EXPECT_EQ(sim->match, OutputMatch::kMismatch);
  EXPECT_TRUE(sim->computes_something_else());
  EXPECT_GE(sim->max_abs_diff, 0.5);
  EXPECT_THAT(sim->match_detail, HasSubstr("output 'y'"));
}

TEST_F(BenchTest, FailedRungsAreRowsWithTheirClassAndReason) {
  ScopedEnv fail("RUNG_SIM_EP_FAIL_AT", "compile");
  auto rep = bench(options({}));  // the whole ladder: sim, TensorRT, CUDA, WebGPU, and the CPU
  const auto& m = rep.models[0];
  ASSERT_EQ(m.rows.size(), 5u);
  EXPECT_TRUE(m.rows[0].ok);
  const auto* sim = find(m, kSim);
  EXPECT_FALSE(sim->ok);
  EXPECT_EQ(sim->failure_class, "build_failed");
  EXPECT_THAT(sim->failure_reason, HasSubstr("simulated failure at compile"));
  EXPECT_EQ(sim->match, OutputMatch::kNotCompared);
  const auto* cuda = find(m, "cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->failure_class, "provider_unavailable");
  // Not started: the standing's sentence, as doctor and the probe say it (not ONNX Runtime's words for the failed load).
  EXPECT_EQ(cuda->failure_reason, "ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) is not beside libonnxruntime.so.1");
  const auto* trt = find(m, "tensorrt");
  ASSERT_NE(trt, nullptr);
  EXPECT_EQ(trt->model_id, "elementwise_f16");  // TensorRT would have built an fp16 engine
  const auto* webgpu = find(m, "webgpu");
  ASSERT_NE(webgpu, nullptr);
  EXPECT_FALSE(webgpu->ok);
  EXPECT_THAT(webgpu->failure_reason, HasSubstr("WebGPU adapter"));
}

TEST_F(BenchTest, AbortingProviderIsACrashedRowAndTheHostLives) {
  ScopedEnv abort("RUNG_SIM_EP_ABORT_AT", "compile");
  auto rep = bench(options());
  const auto* sim = find(rep.models[0], kSim);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->failure_class, "crashed");
  EXPECT_THAT(sim->failure_reason, HasSubstr("SIGABRT"));
}

TEST_F(BenchTest, RoundsRotateTheOrderAndPoolTheRuns) {
  auto o = options();
  o.rounds = 2;
  std::vector<std::pair<int, std::string>> starts;
  o.on_progress = [&](const std::string&, const std::string& rung, int round, int done, int) {
    if (done == 0) starts.emplace_back(round, rung);
  };
  auto rep = bench(o);
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_EQ(starts[0], std::make_pair(0, std::string("CPU")));
  EXPECT_EQ(starts[1], std::make_pair(0, std::string(kSim)));
  EXPECT_EQ(starts[2], std::make_pair(1, std::string(kSim)));
  EXPECT_EQ(starts[3], std::make_pair(1, std::string("CPU")));
  for (const auto& r : rep.models[0].rows) {
    EXPECT_EQ(r.latency.count, 10) << r.rung;
    EXPECT_EQ(r.round_p50_ms.size(), 2u) << r.rung;
  }
  // The CPU's second round is compared with its first: it is deterministic.
  EXPECT_EQ(rep.models[0].rows[0].match, OutputMatch::kReference);
}

TEST_F(BenchTest, DurationZerosAndTheBareLoop) {
  auto o = options();
  o.runs = 0;
  o.duration_s = 0.2;
  o.zero_inputs = true;
  o.compare_bare = true;
  auto rep = bench(o);
  const auto& cpu = rep.models[0].rows[0];
  EXPECT_GE(cpu.latency.count, 1);
  EXPECT_EQ(rep.models[0].inputs_described, "x float32 [1, 16, 64] (zeros)");
  ASSERT_TRUE(cpu.bare_p50_ms.has_value());
  EXPECT_GT(*cpu.bare_p50_ms, 0);
  EXPECT_THAT(::testing::PrintToString(cpu.evidence), HasSubstr("bare OrtApi::Run loop"));
  EXPECT_FALSE(rep.models[0].rows[1].bare_p50_ms.has_value());  // only the CPU rung is compared with the bare loop
}

TEST_F(BenchTest, PeakMemoryIsTheWorkingProcesssOwn) {
  // 48 MiB of weights: the child that runs this model holds them; the small model's does not.
  fs::path big = dir_ / "big.onnx";
  const int n = 12 * 1024 * 1024;
  test::ModelBuilder b;
  b.input("x", {n}).initializer("w", {n}, std::vector<float>(n, 0.5f)).node("Add", {"x", "w"}, {"y"}).output("y", {n});
  b.save(big);
  auto o = options({});
  o.rungs = {};
  o.plugin_dirs.clear();
  o.models = {{"small", model_, {}}, {"big", big, {}}};
  o.runs = 2;
  auto rep = bench(o);
  ASSERT_EQ(rep.models.size(), 2u);
  const double small = rep.models[0].rows[0].peak_rss_mb, large = rep.models[1].rows[0].peak_rss_mb;
  EXPECT_GT(large, small + 48) << small << " " << large;
}

TEST_F(BenchTest, BadInputIsRefusedBeforeAnythingIsMeasured) {
  {
    auto o = options();
    o.models = {{"missing", dir_ / "nope.onnx", {}}};
    auto r = run_bench(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
    EXPECT_THAT(r.error().message, HasSubstr("nope.onnx: does not exist"));
  }
  {
    std::ofstream(dir_ / "text.onnx") << "this is not a model\n";
    auto o = options();
    o.models = {{"text", dir_ / "text.onnx", {}}};
    auto r = run_bench(o);
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr(": not an ONNX model: "));
  }
  {
    auto o = options();
    o.runs = 0;
    auto r = run_bench(o);
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("--runs must be at least 1, not 0"));
  }
  {
    auto r = run_bench(options({"coreml"}));
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("no rung 'coreml' on this device"));
    EXPECT_THAT(r.error().message, HasSubstr("rung_sim_ep, tensorrt, cuda, webgpu, cpu"));
  }
  {
    Tensor wrong{"x", ElementType::kFloat, {1, 16, 32}, std::vector<std::byte>(16 * 32 * 4), {}};
    fs::create_directories(dir_ / "inputs");
    ASSERT_TRUE(write_tensor_file(wrong, dir_ / "inputs" / "x.pb"));
    auto o = options();
    o.input_dir = dir_ / "inputs";
    auto r = run_bench(o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(r.error().message, HasSubstr("input 'x' is [1, 16, 32], the model wants [1, 16, 64]"));
  }
}

TEST_F(BenchTest, AModelTheFloorCannotRunIsFoundBeforeOtherRungsAreMeasured) {
  Tensor wrong{"x", ElementType::kFloat, {1, 16, 32}, std::vector<std::byte>(16 * 32 * 4), {}};
  fs::create_directories(dir_ / "inputs");
  ASSERT_TRUE(write_tensor_file(wrong, dir_ / "inputs" / "x.pb"));
  auto o = options();
  InputSpec bad;
  bad.tensors_dir = dir_ / "inputs";
  o.models = {{"good", model_, {}}, {"bad", model_, bad}};
  std::vector<std::string> started;
  o.on_progress = [&](const std::string& model, const std::string& rung, int, int done, int) {
    if (done == 0) started.push_back(model + "/" + rung);
  };
  auto r = run_bench(o);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("model bad: the CPU rung cannot run it: input 'x' is [1, 16, 32]"));
  EXPECT_EQ(started, (std::vector<std::string>{"good/CPU", "bad/CPU"}));
}

TEST_F(BenchTest, RecordedInputsOfTheRightShapeAreFed) {
  std::vector<float> ones(16 * 64, 1.0f);
  Tensor x{"x", ElementType::kFloat, {1, 16, 64}, {}, {}};
  x.bytes.resize(ones.size() * 4);
  std::memcpy(x.bytes.data(), ones.data(), x.bytes.size());
  fs::create_directories(dir_ / "inputs");
  ASSERT_TRUE(write_tensor_file(x, dir_ / "inputs" / "x.pb"));
  auto o = options();
  o.input_dir = dir_ / "inputs";
  auto rep = bench(o);
  EXPECT_EQ(rep.inputs_mode, "recorded: " + (dir_ / "inputs").string());
  EXPECT_EQ(rep.models[0].inputs_described, "x float32 [1, 16, 64] (recorded)");
  EXPECT_TRUE(rep.models[0].rows[1].ok);
}

}  // namespace
}  // namespace rung
