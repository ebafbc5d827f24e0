// The engine an application embeds, on the real ONNX Runtime 1.30.0 with the
// simulated accelerator as the compiling rung (its compile-delay knob set).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "model_builder.h"
#include "os/file_hash.h"
#include "rung/cpus.h"
#include "rung/engine_core.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

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

// The engines' failure records (NAME-SHA.failed.json), not their identities (NAME-SHA.identity.json).
std::vector<fs::path> failure_records_under(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& f : files_under(dir, ".json")) {
    if (f.filename().string().ends_with(".failed.json")) out.push_back(f);
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
  auto failures = failure_records_under(dir_ / "cache" / "engines");
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
  o.models = {{"small", Role::kDetector, dir_ / "small.onnx", {}, {}, {}},
              {"poisoned", Role::kGeneric, dir_ / "poisoned.onnx", {}, {}, {}}};
  start(o)->wait_until_settled();
  auto failures = failure_records_under(dir_ / "cache" / "engines");
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
    if (e.filename().string().rfind("small-", 0) != 0) continue;
    std::ofstream(e, std::ios::trunc) << "not a model any more";
    // As the build left it, identity and all (a compiler that wrote what the runtime cannot load): the
    // identity holds, so the engine is loaded, fails, and the rung below serves.
    const fs::path identity = fs::path(e).replace_extension(".identity.json");
    auto j = nlohmann::json::parse(test::read_file(identity));
    j["engine_sha256"] = *sha256_of_file(e);
    std::ofstream(identity, std::ios::trunc) << j.dump();
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
  EXPECT_THAT(engine->progress().line(), ::testing::StartsWith("small stays on CPU: its rung_sim_ep engine failed to load ("));
  EXPECT_THAT(engine->progress().line(), HasSubstr(".onnx: not an ONNX model: protobuf parsing failed)"));
}

TEST_F(EngineTest, TheReasonSaysTheAcceptanceRatioAdmittedASlowerRung) {
  ScopedEnv delay("RUNG_SIM_EP_COMPUTE_DELAY_US", "200");  // surely slower than the CPU, well within 1000x
  auto engine = start(options());
  engine->wait_until_settled();
  ASSERT_EQ(engine->chosen_rung(), kSim);
  EXPECT_EQ(engine->chosen_reason(), "within 1000× the floor's time (acceptance ratio) and faithful to it");
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


// Every entry under `dir`, as paths relative to it.
std::set<std::string> entries_under(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.insert(fs::relative(it->path(), dir).generic_string());
  }
  return out;
}

// A model's name becomes part of file names in the cache (its engines, the probe's
// work): whatever it holds, nothing is written outside the cache directory.
TEST_F(EngineTest, NoModelNameWritesAFileOutsideTheCache) {
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside / "a" / "b" / "c");
  auto o = options();
  o.cache_dir = outside / "a" / "b" / "c" / "cache";
  o.models = {{"../../../../escaped", Role::kGeneric, dir_ / "small.onnx", {}, {}, {}},
              {(outside / "absolute").string(), Role::kGeneric, dir_ / "medium.onnx", {}, {}, {}},
              {"..", Role::kGeneric, dir_ / "large.onnx", {}, {}, {}}};
  const auto before = entries_under(dir_);
  auto engine = start(o);
  ASSERT_TRUE(engine);
  engine->wait_until_settled();
  EXPECT_EQ(engine->chosen_rung(), kSim);
  auto job = engine->open_job();
  ASSERT_TRUE(job);
  auto s = (*job)->session("../../../../escaped");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE((*s)->run({input_for(32)}));
  engine.reset();
  for (const auto& e : entries_under(dir_)) {
    if (before.count(e)) continue;
    EXPECT_EQ(e.rfind("outside/a/b/c/cache", 0), 0u) << e << " was written outside the cache";
  }
  EXPECT_FALSE(files_under(o.cache_dir, ".onnx").empty()) << "the engines were built, under the cache";
}

TEST(ModelFileStem, KeepsANameThatKeepsTheRuleAndMakesAnyOtherASafeDistinctStem) {
  EXPECT_EQ(model_file_stem("ppocr_det_v4"), "ppocr_det_v4");
  EXPECT_EQ(model_file_stem("a.b-c_9"), "a.b-c_9");
  const std::string sixty_four(64, 'm');
  EXPECT_EQ(model_file_stem(sixty_four), sixty_four);
  std::set<std::string> stems;
  const std::vector<std::string> names = {"..", ".", "../x", "/etc/passwd", "a/b", "a\\b", "", "-rf", ".hidden", "_x", "x y", "\xff",
                                         std::string(65, 'm'), std::string(300, '.'), "a\nb"};
  for (const std::string& name : names) {
    const std::string stem = model_file_stem(name);
    EXPECT_LE(stem.size(), kMaxModelNameLength) << name;
    EXPECT_EQ(stem.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"), std::string::npos) << stem;
    EXPECT_NE(stem.front(), '.') << stem;
    EXPECT_NE(stem.front(), '-') << stem;
    EXPECT_TRUE(stems.insert(stem).second) << "two names share the stem " << stem;
  }
}

TEST(ModelNameRule, HoldsAtEachBoundary) {
  EXPECT_EQ(model_name_problem("a"), "");
  EXPECT_EQ(model_name_problem("9lives"), "");
  EXPECT_EQ(model_name_problem("a.b-c_d"), "");
  EXPECT_EQ(model_name_problem(std::string(64, 'm')), "");
  EXPECT_THAT(model_name_problem(std::string(65, 'm')), HasSubstr("65 bytes long; at most 64"));
  EXPECT_THAT(model_name_problem(""), HasSubstr("needs a name"));
  for (const char* first : {".", "_", "-"}) EXPECT_THAT(model_name_problem(std::string(first) + "x"), HasSubstr("starts with")) << first;
  for (const char* bad : {"a/b", "a\\b", "a b", "a:b", "\xff", "a\x1b[2J"}) EXPECT_THAT(model_name_problem(bad), HasSubstr("holds byte")) << bad;
  EXPECT_THAT(model_name_problem("../../../../escaped"), HasSubstr("holds byte 0x2f"));
}

// Isolation holds or the start fails: never a probe in the application's process behind its back.
TEST_F(EngineTest, IsolationWithoutAWorkerIsAnErrorAtStartNamingWhereItLooked) {
  auto o = options();
  o.worker = dir_ / "no-such-worker";
  auto e = core::Engine::start(o);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(e.error().message, HasSubstr((dir_ / "no-such-worker").string()));
  EXPECT_THAT(e.error().message, HasSubstr("isolate"));
  o.isolate = false;  // asked for: the probe runs in this process
  auto in_process = core::Engine::start(o);
  ASSERT_TRUE(in_process) << in_process.error().message;
  (*in_process)->wait_until_settled();
}

TEST_F(EngineTest, ACacheDirectoryThatIsAFileIsRefused) {
  auto o = options();
  std::ofstream(dir_ / "cache-file") << "x";
  o.cache_dir = dir_ / "cache-file";
  auto e = core::Engine::start(o);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.error().message, HasSubstr(": is a regular file, not a directory"));
}

// Freeing the engine stops a probe whose provider hangs (in its worker): the
// worker is killed, nothing is decided or cached, and the free takes well
// under the second it is allowed (the bound here is generous for a loaded machine).
TEST_F(EngineTest, FreeingTheEngineWhileAProviderHangsReturnsAtOnceAndCachesNothing) {
  ScopedEnv hang("RUNG_SIM_EP_HANG_AT", "compile");
  auto engine = start(options());
  ASSERT_TRUE(engine);
  // The floor first, then the hanging rung: wait until its worker has been at it a while.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(engine->probe_done());
  EXPECT_FALSE(engine->wait_until_settled_for(std::chrono::milliseconds(0)));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(engine->wait_until_settled_for(std::chrono::milliseconds(1)));
  EXPECT_FALSE(engine->wait_until_settled_for(std::chrono::milliseconds(50)));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(50));
  const auto freeing = std::chrono::steady_clock::now();
  engine.reset();
  const auto took = std::chrono::steady_clock::now() - freeing;
  // Not a speed target: the bound only tells "stopped" (some 20 ms here) from "waited for the
  // hung worker" (the probe's 180 s deadline), with room for any load.
  EXPECT_LT(took, std::chrono::seconds(30)) << "freeing the engine took "
                                            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  for (const auto& f : files_under(dir_ / "cache", ".json")) {
    EXPECT_NE(f.filename(), "probe.json") << "a stopped probe decided nothing, so it caches nothing";
  }
  for (const auto& e : entries_under(dir_ / "cache")) EXPECT_EQ(e.find("probe-work"), std::string::npos) << e << " was left behind";
}

// A provider that allocates without end: under the engine's memory limit its worker
// fails the allocation and ends saying so, the rung is refused as crashed with that
// reason, and the application's engine goes on serving the floor.
TEST_F(EngineTest, AProviderThatAllocatesWithoutEndEndsItsWorkerNotTheApplication) {
  // qemu-user keeps RLIMIT_DATA from the host (it would starve qemu itself), so an emulated
  // worker's limit holds nothing and the provider grows until its deadline: the native run holds the rule.
  if (std::getenv("RUNG_HOST_PROGRAM_PREFIX") != nullptr) GTEST_SKIP() << "under qemu-user a worker's memory limit is not enforced";
  ScopedEnv grow("RUNG_SIM_EP_GROW_AT", "compile");
  auto o = options();
  o.worker_memory_limit_mb = 1024;
  auto engine = start(o);
  ASSERT_TRUE(engine);
  ASSERT_TRUE(engine->wait_until_settled_for(std::chrono::minutes(5))) << engine->about_line();
  EXPECT_EQ(engine->chosen_rung(), "cpu") << engine->about_line();
  const auto doc = nlohmann::json::parse(engine->decision_json());
  bool seen = false;
  for (const auto& r : doc.at("probe").at("rungs")) {
    if (r.at("rung") != "rung_sim_ep") continue;
    seen = true;
    EXPECT_EQ(r.at("verdict"), "crashed") << r.dump(2);
    EXPECT_THAT(r.dump(), HasSubstr("out of memory: the job reached its limit of 1024 MiB")) << r.dump(2);
  }
  EXPECT_TRUE(seen) << doc.dump(2);
  auto job = engine->open_job();
  ASSERT_TRUE(job);
  auto s = (*job)->session("small");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ((*s)->rung(), "cpu");
  EXPECT_TRUE((*s)->run({input_for(32)}));
}

// A wait's timeout saturates: one too long to add to the clock waits for ever, never returns at once.
TEST_F(EngineTest, AWaitLongerThanTheClockCanCountWaitsUntilSettled) {
  auto engine = start(options());
  ASSERT_TRUE(engine);
  EXPECT_TRUE(engine->wait_until_settled_for(std::chrono::milliseconds::max()));
  EXPECT_TRUE(engine->wait_until_settled_for(std::chrono::milliseconds(0)));  // settled: true at once
}

TEST_F(EngineTest, AnInputGivenTwiceIsRefusedNamingIt) {
  auto engine = start(options());
  ASSERT_TRUE(engine);
  auto job = engine->open_job();
  ASSERT_TRUE(job);
  auto s = (*job)->session("small");
  ASSERT_TRUE(s) << s.error().message;
  auto out = (*s)->run({input_for(32), input_for(32, 0.5f)});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(out.error().message, HasSubstr("input 'x' is given twice"));
  EXPECT_TRUE((*s)->run({input_for(32)})) << "once is fine";
}

// rung's variables, set around an engine whose options do not read them, change nothing.
TEST_F(EngineTest, RungsVariablesChangeNothingWhenTheOptionsDoNotReadThem) {
  auto o = options();
  o.plugin_dirs.clear();
  o.runtimes.read_plugin_environment = false;
  ScopedEnv ort("RUNG_ORT_DIR", "/nonexistent-rung-ort-dir");
  ScopedEnv forced("RUNG_FORCE_RUNG", "no_such_rung");
  ScopedEnv plugins("RUNG_PLUGIN_DIR", (dir_ / "plugins").c_str());
  ScopedEnv worker("RUNG_PROBE_WORKER", "/bin/false");
  ScopedEnv gpu("RUNG_SOFTWARE_GPU", "1");
  ScopedEnv gpu_dir("RUNG_SOFTWARE_GPU_DIR", "/nonexistent-rung-gpu");
  auto engine = start(o);
  ASSERT_TRUE(engine);
  engine->wait_until_settled();
  EXPECT_EQ(engine->chosen_rung(), "cpu") << "RUNG_PLUGIN_DIR was not read: no plugin rung";
  EXPECT_THAT(engine->about_line(), Not(HasSubstr("RUNG_")));
  // Read when the options say so: the same variables now fail the start (RUNG_ORT_DIR names nothing).
  o.runtimes.read_environment = true;
  o.cache_dir = dir_ / "cache2";
  auto reading = core::Engine::start(o);
  ASSERT_FALSE(reading);
  EXPECT_EQ(reading.error().code, ErrorCode::kNoRuntime);
  EXPECT_THAT(reading.error().message, HasSubstr("RUNG_ORT_DIR"));
}

}  // namespace
}  // namespace rung
