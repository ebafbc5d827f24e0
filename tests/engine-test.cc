// The engine an application embeds, on the real ONNX Runtime 1.30.0 with the
// simulated accelerator as the compiling rung (its compile-delay knob set).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "model_builder.h"
#include "rung/cpus.h"
#include "rung/engine_core.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kSim = "rung_sim_ep";

// An element-wise model the simulated accelerator claims whole; `width` sets its size on disk.
fs::path write_model(const fs::path& file, int width, const std::string& add_node_name = "") {
  test::ModelBuilder b;
  b.input("x", {1, 16, width})
      .initializer("w", {1, 16, width}, std::vector<float>(static_cast<std::size_t>(16 * width), 0.5f))
      .node("Mul", {"x", "w"}, {"m"})
      .node("Add", {"m", "x"}, {"a"}, add_node_name)
      .node("Relu", {"a"}, {"y"})
      .output("y", {1, 16, width});
  return b.save(file);
}

Tensor input_for(int width, float value = 0.25f) {
  Tensor t;
  t.name = "x";
  t.type = ElementType::kFloat;
  t.shape = {1, 16, width};
  std::vector<float> v(static_cast<std::size_t>(16 * width));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = value * static_cast<float>(i % 7) - 0.5f;
  t.bytes.resize(v.size() * sizeof(float));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

std::vector<fs::path> files_under(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == extension) out.push_back(it->path());
  }
  return out;
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-engine");
    test::make_plugin_dir(dir_);
    write_model(dir_ / "small.onnx", 32);
    write_model(dir_ / "medium.onnx", 256);
    write_model(dir_ / "large.onnx", 1024);
  }
  void TearDown() override { fs::remove_all(dir_); }

  core::EngineOptions options() {
    core::EngineOptions o;
    o.cache_dir = dir_ / "cache";
    // Registered largest first: the builder must still go smallest first.
    o.models = {{"large", Role::kGeneric, dir_ / "large.onnx", {}, {}, {}},
                {"medium", Role::kEmbedder, dir_ / "medium.onnx", {}, {}, {}},
                {"small", Role::kDetector, dir_ / "small.onnx", {}, {}, {}}};
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.acceptance_ratio = 1000;  // the simulated accelerator is not faster; admit it
    o.probe_runs = 1;
    return o;
  }

  std::shared_ptr<core::Engine> start(core::EngineOptions o) {
    auto e = core::Engine::start(std::move(o));
    EXPECT_TRUE(e) << e.error().message;
    return e ? *e : nullptr;
  }

  static void wait_for_probe(const core::Engine& e) {
    while (!e.probe_done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  fs::path dir_;
};

TEST_F(EngineTest, StartingNeverBlocksAndTheFloorServesUntilTheProbeReports) {
  ScopedEnv slow("RUNG_SIM_EP_COMPILE_DELAY_MS", "1000");
  auto engine = start(options());
  ASSERT_TRUE(engine);
  EXPECT_FALSE(engine->probe_done());  // the probe's own compile takes a second
  EXPECT_EQ(engine->chosen_rung(), "cpu");
  EXPECT_THAT(engine->about_line(), HasSubstr("probing"));
  auto job = engine->open_job();
  ASSERT_TRUE(job);
  auto s = (*job)->session("small");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->rung(), "cpu");
  auto out = (*s)->run({input_for(32)});
  ASSERT_TRUE(out) << out.error().message;
  engine->wait_until_settled();
  EXPECT_EQ(engine->chosen_rung(), kSim);
}

TEST_F(EngineTest, EnginesLandOneByOneSmallestFirst) {
  ScopedEnv slow("RUNG_SIM_EP_COMPILE_DELAY_MS", "200");
  std::mutex mutex;
  std::vector<std::string> building;
  std::vector<std::size_t> landed;
  std::vector<std::string> lines;
  auto o = options();
  o.on_progress = [&](const core::EngineProgress& p) {
    std::lock_guard lock(mutex);
    if (!p.building.empty() && (building.empty() || building.back() != p.building)) building.push_back(p.building);
    if (landed.empty() || landed.back() != p.landed) landed.push_back(p.landed);
    lines.push_back(p.line());
  };
  auto engine = start(o);
  engine->wait_until_settled();
  std::lock_guard lock(mutex);
  EXPECT_THAT(building, ElementsAre("small", "medium", "large"));
  EXPECT_THAT(landed, ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(lines, ::testing::Contains("Preparing engines · 1 of 3"));
  EXPECT_EQ(engine->progress().line(), "");  // nothing when done
  EXPECT_EQ(files_under(dir_ / "cache" / "engines", ".onnx").size(), 3u);
}

TEST_F(EngineTest, AJobKeepsItsFallbackToTheEndAndTheNextJobGetsTheEngine) {
  ScopedEnv slow("RUNG_SIM_EP_COMPILE_DELAY_MS", "1200");
  auto engine = start(options());
  wait_for_probe(*engine);
  ASSERT_EQ(engine->chosen_rung(), kSim);
  auto before = *engine->open_job();  // opened before any engine landed
  auto early = before->session("small");
  ASSERT_TRUE(early) << early.error().message;
  EXPECT_EQ((*early)->rung(), "cpu");
  EXPECT_THAT((*early)->placement_reason(), HasSubstr("engine not built yet"));
  auto early_out = (*early)->run({input_for(32)});
  ASSERT_TRUE(early_out);

  engine->wait_until_settled();
  // Everything landed meanwhile; the old job does not switch, not even for a model it opens now.
  auto still = before->session("small");
  ASSERT_TRUE(still);
  EXPECT_EQ(*still, *early);
  EXPECT_EQ((*before->session("medium"))->rung(), "cpu");
  EXPECT_EQ(before->rung(), kSim);

  auto after = *engine->open_job();
  auto late = after->session("small");
  ASSERT_TRUE(late) << late.error().message;
  EXPECT_EQ((*late)->rung(), kSim);
  EXPECT_EQ((*late)->placement_reason(), "the chosen rung's engine");
  auto late_out = (*late)->run({input_for(32)});
  ASSERT_TRUE(late_out) << late_out.error().message;
  EXPECT_EQ((*late_out)[0].bytes, (*early_out)[0].bytes);  // the engine computes what the floor computed

  // The model ids name what is computed, not where: the embedder's never changes across rungs.
  EXPECT_EQ(before->model_ids(), (std::map<std::string, std::string>{{"medium", "medium"}, {"small", "small"}}));
  ASSERT_TRUE(after->session("medium"));
  EXPECT_EQ((*after->session("medium"))->rung(), kSim);
  EXPECT_EQ(after->model_ids().at("medium"), before->model_ids().at("medium"));
}

TEST_F(EngineTest, ACompileFailureDemotesOnlyThatModelAndSaysSo) {
  ScopedEnv reject("RUNG_SIM_EP_REJECT_NODES", "poison");
  write_model(dir_ / "poisoned.onnx", 64, "poison_add");
  auto o = options();
  o.models.push_back({"poisoned", Role::kGeneric, dir_ / "poisoned.onnx", {}, {}, {}});
  auto engine = start(o);
  engine->wait_until_settled();
  EXPECT_EQ(engine->chosen_rung(), kSim);  // the probe model (the smallest) compiles
  auto progress = engine->progress();
  EXPECT_EQ(progress.landed, 4u);
  ASSERT_EQ(progress.failures.size(), 1u);
  EXPECT_EQ(progress.line(),
            "poisoned stays on CPU: its rung_sim_ep engine failed to build (RungSimAccelerator: the compiler rejects node 'poison_add')");
  EXPECT_THAT(engine->about_line(), HasSubstr("poisoned engine failed: RungSimAccelerator: the compiler rejects node 'poison_add'"));
  auto job = *engine->open_job();
  EXPECT_EQ((*job->session("poisoned"))->rung(), "cpu");
  EXPECT_THAT((*job->session("poisoned"))->placement_reason(), HasSubstr("engine failed"));
  for (const char* ok : {"small", "medium", "large"}) {
    EXPECT_EQ((*job->session(ok))->rung(), kSim) << ok << ": " << (*job->session(ok))->placement_reason();
  }
}

TEST_F(EngineTest, AFailedBuildIsNotRetriedUntilTheModelFileChanges) {
  ScopedEnv reject("RUNG_SIM_EP_REJECT_NODES", "poison");
  write_model(dir_ / "poisoned.onnx", 64, "poison_add");
  auto o = options();
  o.models = {{"small", Role::kDetector, dir_ / "small.onnx", {}, {}, {}},
              {"poisoned", Role::kGeneric, dir_ / "poisoned.onnx", {}, {}, {}}};
  start(o)->wait_until_settled();
  auto failures = files_under(dir_ / "cache" / "engines", ".json");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0].filename().string(), ::testing::StartsWith("poisoned-"));
  {
    ScopedEnv trace("RUNG_SIM_EP_TRACE_FILE", (dir_ / "trace").c_str());
    auto again = start(o);
    again->wait_until_settled();
    EXPECT_EQ(again->progress().failures.size(), 1u);
  }
  // Nothing compiled the second time: both answers came from the cache.
  EXPECT_FALSE(fs::exists(dir_ / "trace"));
  // A corrected model file is another file: it is built.
  write_model(dir_ / "poisoned.onnx", 64, "fixed_add");
  auto fixed = start(o);
  fixed->wait_until_settled();
  EXPECT_TRUE(fixed->progress().failures.empty());
  EXPECT_EQ((*(*fixed->open_job())->session("poisoned"))->rung(), kSim);
}

TEST_F(EngineTest, ADamagedFailureRecordIsReadAsAFailureNotACrash) {
  ScopedEnv reject("RUNG_SIM_EP_REJECT_NODES", "poison");
  write_model(dir_ / "poisoned.onnx", 64, "poison_add");
  auto o = options();
  o.models = {{"small", Role::kDetector, dir_ / "small.onnx", {}, {}},
              {"poisoned", Role::kGeneric, dir_ / "poisoned.onnx", {}, {}}};
  start(o)->wait_until_settled();
  auto failures = files_under(dir_ / "cache" / "engines", ".json");
  ASSERT_EQ(failures.size(), 1u);
  // A reason of the wrong kind, then nesting far beyond any stack.
  for (const std::string& damage : {std::string(R"({"reason": {"not": "a string"}})"), std::string(50'000, '[') + std::string(50'000, ']')}) {
    std::ofstream(failures[0], std::ios::trunc) << damage;
    auto again = start(o);
    again->wait_until_settled();
    ASSERT_EQ(again->progress().failures.size(), 1u);
    EXPECT_THAT(again->progress().failures[0], HasSubstr("poisoned stays on"));
    EXPECT_THAT(again->about_line(), HasSubstr("poisoned engine failed: failed before"));
  }
}

TEST_F(EngineTest, WrongInputsAreClearErrorsNamingModelInputAndExpectation) {
  auto o = options();
  o.plugin_dirs.clear();
  auto engine = start(o);
  auto job = *engine->open_job();
  auto s = *job->session("small");
  Tensor wrong_name = input_for(32);
  wrong_name.name = "pixels";
  auto r = s->run({wrong_name});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "model small: has no input 'pixels' (its inputs: x)");
  Tensor wrong_shape = input_for(33);
  r = s->run({wrong_shape});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "model small: input 'x' has shape [1, 16, 33], expected [1, 16, 32]");
  Tensor wrong_type = input_for(32);
  wrong_type.type = ElementType::kInt32;
  r = s->run({wrong_type});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "model small: input 'x' is int32, expected float32");
  r = s->run({});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "model small: input 'x' (float32 [1, 16, 32]) is missing");
  auto unknown = job->session("nobody");
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, HasSubstr("no model named 'nobody'"));
  engine->wait_until_settled();
}

TEST_F(EngineTest, AnEngineThatFailsToLoadIsServedByTheRungBelow) {
  start(options())->wait_until_settled();
  auto engines = files_under(dir_ / "cache" / "engines", ".onnx");
  ASSERT_EQ(engines.size(), 3u);
  for (const auto& e : engines) {
    if (e.filename().string().rfind("small-", 0) == 0) std::ofstream(e, std::ios::trunc) << "not a model any more";
  }
  auto engine = start(options());
  engine->wait_until_settled();
  auto job = *engine->open_job();
  auto s = job->session("small");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->rung(), "cpu");
  EXPECT_THAT(engine->about_line(), HasSubstr("small on rung_sim_ep failed to load"));
  EXPECT_TRUE((*s)->run({input_for(32)}));
  // The progress line names it as the final table does: staying on the rung that serves it.
  EXPECT_THAT(engine->progress().line(), ::testing::StartsWith("small stays on CPU: its rung_sim_ep engine failed to load (Load model from "));
  EXPECT_THAT(engine->progress().line(), HasSubstr("Protobuf parsing failed"));
}

TEST_F(EngineTest, TheReasonSaysTheAcceptanceRatioAdmittedASlowerRung) {
  ScopedEnv delay("RUNG_SIM_EP_COMPUTE_DELAY_US", "200");  // surely slower than the CPU, well within 1000x
  auto engine = start(options());
  engine->wait_until_settled();
  ASSERT_EQ(engine->chosen_rung(), kSim);
  EXPECT_EQ(engine->chosen_reason(), "within 1000.0x the floor's time (acceptance ratio) and faithful to it");
}

TEST_F(EngineTest, TheCpuRungCachesItsOptimisedGraph) {
  auto o = options();
  o.plugin_dirs.clear();
  auto first = start(o);
  first->wait_until_settled();
  EXPECT_EQ(first->chosen_rung(), "cpu");
  EXPECT_EQ(files_under(dir_ / "cache" / "engines", ".ort").size(), 3u);
  auto job = *first->open_job();
  auto s = *job->session("medium");
  EXPECT_THAT(s->placement_reason(), HasSubstr("optimised graph from the cache"));
  auto cached = s->run({input_for(256)});
  ASSERT_TRUE(cached);
  // Deleting the cache directory costs a rebuild and nothing else.
  first.reset();
  fs::remove_all(dir_ / "cache");
  auto second = start(o);
  auto early = *second->open_job();
  auto plain = (*early->session("medium"))->run({input_for(256)});
  ASSERT_TRUE(plain);
  EXPECT_EQ((*plain)[0].bytes, (*cached)[0].bytes);
  second->wait_until_settled();
  EXPECT_EQ(files_under(dir_ / "cache" / "engines", ".ort").size(), 3u);
}

TEST_F(EngineTest, InferenceThreadsAreTheBigCoresOrThePhysicalCoresMinusTwo) {
  auto o = options();
  o.plugin_dirs.clear();
  o.hardware_root = test::fixtures_dir() / "hardware" / "amd-rocm-desktop";
  auto engine = start(o);
  ASSERT_TRUE(engine);
  EXPECT_EQ(engine->inference_threads(), 1);
  engine->wait_until_settled();
  engine.reset();
  // A big.LITTLE board's default is its big cores (4 on the RK3588), within what this process may run on.
  o.hardware_root = test::fixtures_dir() / "hardware" / "rockchip-rk3588-mali";
  auto board = start(o);
  ASSERT_TRUE(board);
  EXPECT_EQ(board->inference_threads(), std::min(4, usable_cpus()));
  board->wait_until_settled();
  board.reset();
  o.hardware_root = test::fixtures_dir() / "hardware" / "amd-rocm-desktop";
  // An explicit count is kept as given; it may be any count this machine can run.
  o.inference_threads = usable_cpus();
  auto explicit_count = start(o);
  ASSERT_TRUE(explicit_count);
  EXPECT_EQ(explicit_count->inference_threads(), usable_cpus());
  explicit_count->wait_until_settled();
  explicit_count.reset();
  // More than this machine gives is refused at start, naming the option.
  o.inference_threads = usable_cpus() + 1;
  auto refused = core::Engine::start(o);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("out of range"));
}

}  // namespace
}  // namespace rung
