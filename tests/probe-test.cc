// The probe on the real ONNX Runtime 1.30.0 build and the simulated accelerator:
// every verdict produced for real, the fingerprint, the cache and its faults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model_builder.h"
#include "probe/attempts.h"
#include "probe/fingerprint.h"
#include "rung/probe.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::Not;

constexpr const char* kSimRung = "rung_sim_ep";

const RungOutcome* find(const ProbeOutcome& o, const std::string& rung) {
  for (const auto& r : o.rungs) {
    if (r.rung == rung) return &r;
  }
  return nullptr;
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-probe");
    test::make_plugin_dir(dir_);
    model_ = test::write_elementwise_model(dir_ / "elementwise.onnx", {1, 64, 256});
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProbeOptions options() {
    ProbeOptions o;
    o.cache_dir = dir_ / "cache";
    o.models = {{"elementwise", model_, {}}};
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.probe_runs = 3;
    o.probe_deadline = std::chrono::seconds(20);
    return o;
  }

  ProbeOutcome probe(const ProbeOptions& o) {
    auto r = run_probe(o);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : ProbeOutcome{};
  }

  fs::path dir_;
  fs::path model_;
};

TEST_F(ProbeTest, SimulatedAcceleratorIsTakenWhenTheRatioAdmitsIt) {
  auto o = options();
  o.acceptance_ratio = 1000;  // "an accelerator that frees the CPU" within this factor of the floor
  auto out = probe(o);
  EXPECT_EQ(out.chosen, kSimRung);
  const auto* sim = find(out, kSimRung);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->verdict, Verdict::kTaken);
  ASSERT_EQ(sim->models.size(), 1u);
  EXPECT_GT(sim->models[0].median_ms, 0);
  EXPECT_GT(sim->models[0].floor_median_ms, 0);
  EXPECT_EQ(sim->models[0].max_abs_diff, 0.0);
  // The sim rung sits above the platform's own. It compiles engines, so the probe goes on to find
  // what serves until they land: compiling rungs below are not tried, the others are.
  ASSERT_EQ(out.rungs.size(), 4u);
  EXPECT_EQ(out.rungs[1].rung, "tensorrt");
  EXPECT_EQ(out.rungs[1].verdict, Verdict::kNotTried);
  EXPECT_EQ(out.rungs[2].verdict, Verdict::kFailed);  // CUDA
  EXPECT_EQ(out.rungs[3].verdict, Verdict::kFailed);  // WebGPU
  EXPECT_EQ(out.fallback, "cpu");
  EXPECT_THAT(out.about_line(), StartsWith(std::string(kSimRung) + " · ONNX Runtime 1.30.0"));
  EXPECT_FALSE(out.from_cache);
}

TEST_F(ProbeTest, SlowerAcceleratorLosesOnTheClock) {
  ScopedEnv delay("RUNG_SIM_EP_COMPUTE_DELAY_US", "20000");
  auto out = probe(options());
  const auto* sim = find(out, kSimRung);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->verdict, Verdict::kSlower);
  EXPECT_THAT(sim->reason, HasSubstr("the floor's time over"));
  EXPECT_GT(sim->models[0].ratio(), 1.0);
  EXPECT_EQ(out.chosen, "cpu");
}

TEST_F(ProbeTest, PerturbedAcceleratorIsUnfaithfulEvenWhenFastEnough) {
  ScopedEnv perturb("RUNG_SIM_EP_PERTURB", "0.5");
  auto o = options();
  o.acceptance_ratio = 1000;
  auto out = probe(o);
  const auto* sim = find(out, kSimRung);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->verdict, Verdict::kUnfaithful);
  EXPECT_THAT(sim->reason, HasSubstr("output 'y'"));
  EXPECT_GE(sim->models[0].max_abs_diff, 0.5);  // each claimed node adds 0.5
  EXPECT_EQ(out.chosen, "cpu");
  EXPECT_THAT(out.about_line(), HasSubstr("rung_sim_ep unfaithful"));
  EXPECT_THAT(out.about_line(), Not(HasSubstr("output 'y'"))) << "the reason is the table's, not the summary's";
}

TEST_F(ProbeTest, ErrorKnobIsAFailureWithTheProvidersReason) {
  ScopedEnv fail("RUNG_SIM_EP_FAIL_AT", "compile");
  auto out = probe(options());
  const auto* sim = find(out, kSimRung);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->verdict, Verdict::kFailed);
  EXPECT_THAT(sim->reason, HasSubstr("simulated failure at compile"));
}

TEST_F(ProbeTest, RealWebGpuAndCudaFailHereWithTheirReasons) {
  auto o = options();
  o.plugin_dirs.clear();
  auto out = probe(o);
  EXPECT_EQ(out.chosen, "cpu");
  ASSERT_EQ(out.rungs.size(), 3u);
  EXPECT_EQ(out.rungs[0].rung, "tensorrt");
  EXPECT_EQ(out.rungs[1].rung, "cuda");
  EXPECT_EQ(out.rungs[2].rung, "webgpu");
  for (const auto& r : out.rungs) EXPECT_EQ(r.verdict, Verdict::kFailed) << r.rung;
  EXPECT_EQ(out.rungs[1].reason, "ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) is not beside libonnxruntime.so.1");
  EXPECT_THAT(out.rungs[2].reason, HasSubstr("WebGPU adapter"));
  // A summary: the three failures counted, their reasons left to the rows.
  EXPECT_EQ(out.about_line(), "CPU · ONNX Runtime 1.30.0 · 3 rungs failed");
}

TEST_F(ProbeTest, AbortingProviderIsCrashedAndTheHostLives) {
  ScopedEnv abort("RUNG_SIM_EP_ABORT_AT", "compile");
  auto out = probe(options());
  const auto* sim = find(out, kSimRung);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->verdict, Verdict::kCrashed);
  EXPECT_EQ(sim->reason, "the worker was killed by SIGABRT");
  EXPECT_EQ(out.chosen, "cpu");  // and this test process is still here to say so
}

TEST_F(ProbeTest, HangingProviderIsKilledAtTheDeadline) {
  ScopedEnv hang("RUNG_SIM_EP_HANG_AT", "compile");
  auto o = options();
  o.probe_deadline = std::chrono::seconds(2);
  auto out = probe(o);
  const auto* sim = find(out, kSimRung);
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->verdict, Verdict::kTimedOut);
  EXPECT_THAT(sim->reason, HasSubstr("no answer within 2 s"));
  // Killed at its deadline, within a second of it.
  EXPECT_GE(sim->models[0].build_ms, 2000.0);
  EXPECT_LE(sim->models[0].build_ms, 3000.0);
  EXPECT_EQ(out.chosen, "cpu");
}

TEST_F(ProbeTest, SecondRunReadsTheCacheAndNothingIsRecomputed) {
  auto first = probe(options());
  EXPECT_FALSE(first.from_cache);
  auto second = probe(options());
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.chosen, first.chosen);
  EXPECT_EQ(second.about_line(), first.about_line());
  auto j = nlohmann::json::parse(test::read_file(dir_ / "cache" / "probe.json"));
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["fingerprint"]["runtime"]["version"], "1.30.0");
  EXPECT_EQ(j["fingerprint"]["models"][0]["name"], "elementwise");
  EXPECT_EQ(j["fingerprint"]["models"][0]["sha256"].get<std::string>().size(), 64u);
}

TEST_F(ProbeTest, FailureIsCachedLikeSuccess) {
  {
    ScopedEnv fail("RUNG_SIM_EP_FAIL_AT", "compile");
    probe(options());
  }
  // The knob is gone, but nothing in the fingerprint changed: no retry.
  auto again = probe(options());
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(find(again, kSimRung)->verdict, Verdict::kFailed);
}

TEST_F(ProbeTest, ChangingAModelByteReprobes) {
  // The fingerprint covers every registered model, not only the probe model.
  auto o = options();
  fs::copy_file(model_, dir_ / "second.onnx");
  o.models.push_back({"second", dir_ / "second.onnx", {}});
  o.probe_models = {"elementwise"};
  EXPECT_FALSE(probe(o).from_cache);
  EXPECT_TRUE(probe(o).from_cache);
  {
    auto bytes = test::read_file(dir_ / "second.onnx");
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
    std::ofstream(dir_ / "second.onnx", std::ios::binary | std::ios::trunc) << bytes;
  }
  EXPECT_FALSE(probe(o).from_cache);
  EXPECT_TRUE(probe(o).from_cache);
}

TEST_F(ProbeTest, AddingOrChangingADerivedFormReprobes) {
  // A quantised form is what a quantising rung runs: it is fingerprinted like the f32 file.
  auto o = options();
  EXPECT_FALSE(probe(o).from_cache);
  fs::copy_file(model_, dir_ / "elementwise_a16w8.onnx");
  o.models[0].derived = {{NumericForm::kA16W8, dir_ / "elementwise_a16w8.onnx"}};
  EXPECT_FALSE(probe(o).from_cache);
  EXPECT_TRUE(probe(o).from_cache);
  auto j = nlohmann::json::parse(test::read_file(dir_ / "cache" / "probe.json"));
  EXPECT_EQ(j["fingerprint"]["models"][0]["derived"][0]["form"], "a16w8");
  {
    auto bytes = test::read_file(dir_ / "elementwise_a16w8.onnx");
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
    std::ofstream(dir_ / "elementwise_a16w8.onnx", std::ios::binary | std::ios::trunc) << bytes;
  }
  EXPECT_FALSE(probe(o).from_cache);
}

TEST_F(ProbeTest, ChangingTheRuntimeBuildReprobes) {
  probe(options());
  auto o = options();
  o.runtimes.explicit_dir = test::runtime_dir("1.28.2");
  auto out = probe(o);
  EXPECT_FALSE(out.from_cache);
  EXPECT_EQ(out.runtime_version, "1.28.2");
}

TEST_F(ProbeTest, ChangingTheDeviceIdentityReprobes) {
  probe(options());
  auto o = options();
  o.hardware_root = test::fixtures_dir() / "hardware" / "amd-rocm-desktop";
  auto out = probe(o);
  EXPECT_FALSE(out.from_cache);
  // Same runtime, same models, another device: a cache hit would have been wrong.
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  EXPECT_FALSE(probe(o).from_cache);
}

class DamagedCacheTest : public ProbeTest, public ::testing::WithParamInterface<std::pair<const char*, const char*>> {};

TEST_P(DamagedCacheTest, IsIgnoredWithALogLineAndRewritten) {
  probe(options());
  auto [contents, expected] = GetParam();
  std::string text = contents;
  if (text == "TRUNCATE") {
    text = test::read_file(dir_ / "cache" / "probe.json");
    text.resize(text.size() / 2);
  }
  std::ofstream(dir_ / "cache" / "probe.json", std::ios::trunc) << text;
  auto out = probe(options());
  EXPECT_FALSE(out.from_cache);
  ASSERT_FALSE(out.log.empty());
  EXPECT_THAT(out.log.back(), HasSubstr(expected));
  EXPECT_TRUE(nlohmann::json::accept(test::read_file(dir_ / "cache" / "probe.json")));
  EXPECT_TRUE(probe(options()).from_cache);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, DamagedCacheTest,
    ::testing::Values(std::make_pair("TRUNCATE", "not valid JSON"), std::make_pair("this is not json", "not valid JSON"),
                      std::make_pair(R"({"schema": 99, "fingerprint": {}, "outcome": {}})", "has schema 99"),
                      std::make_pair(R"({"schema": 1, "fingerprint": {"runtime": "another build"}, "outcome": {}})",
                                     "was decided under other conditions: the runtime: version")));

TEST_F(ProbeTest, UnwritableCacheDirectoryStillDecides) {
  // The sim rung runs on this same CPU: slowed by 5 ms per node, it cannot win at ratio 1.
  ScopedEnv slow("RUNG_SIM_EP_COMPUTE_DELAY_US", "5000");
  std::ofstream(dir_ / "a-file") << "x";
  auto o = options();
  o.cache_dir = dir_ / "a-file" / "cache";  // cannot exist: its parent is a file
  auto out = probe(o);
  EXPECT_EQ(out.chosen, "cpu");
  ASSERT_FALSE(out.log.empty());
  EXPECT_THAT(out.log.front(), HasSubstr("could not cache"));
}

TEST_F(ProbeTest, MissingAndNonOnnxModelsAreNamedAndTheRestGoesOn) {
  std::ofstream(dir_ / "notes.onnx") << "these are notes, not a model";
  auto o = options();
  o.models.push_back({"gone", dir_ / "gone.onnx", {}});
  o.models.push_back({"notes", dir_ / "notes.onnx", {}});
  o.probe_models = {"gone", "elementwise", "notes"};
  o.acceptance_ratio = 1000;
  auto out = probe(o);
  ASSERT_EQ(out.model_errors.size(), 2u);
  EXPECT_THAT(out.model_errors[0], HasSubstr("model gone: " + (dir_ / "gone.onnx").string() + ": does not exist"));
  EXPECT_THAT(out.model_errors[1], HasSubstr("model notes: the CPU floor cannot load " + (dir_ / "notes.onnx").string()));
  EXPECT_THAT(out.model_errors[1], ::testing::Not(HasSubstr("input spec")));
  EXPECT_THAT(out.model_errors[0], ::testing::Not(HasSubstr("input spec")));
  EXPECT_EQ(out.chosen, kSimRung);  // decided on the model that runs
  EXPECT_EQ(find(out, kSimRung)->models.size(), 1u);
}

TEST_F(ProbeTest, ModelTheFloorCannotFeedNamesTheInputAndHowToGiveASpec) {
  auto o = options();
  auto silero = test::model_path("silero-vad/silero_vad_16k_op15.onnx");
  o.models = {{"silero_vad", silero, {}}};
  o.plugin_dirs.clear();
  auto out = probe(o);
  ASSERT_EQ(out.model_errors.size(), 1u);
  EXPECT_THAT(out.model_errors[0], HasSubstr("model silero_vad"));
  EXPECT_THAT(out.model_errors[0], HasSubstr("sr int64"));
  EXPECT_THAT(out.model_errors[0], HasSubstr("with the option model.silero_vad.input_spec."));
  // With a spec the floor runs it.
  o.models[0].inputs.values["sr"] = {16000};
  o.models[0].inputs.dims["input:1"] = 512;
  auto fed = probe(o);
  EXPECT_TRUE(fed.model_errors.empty()) << fed.model_errors[0];
  EXPECT_GT(fed.floor.models[0].median_ms, 0);
}

TEST_F(ProbeTest, OverrideForcesALowerRungAndSaysSo) {
  auto o = options();
  o.acceptance_ratio = 1000;
  {
    ScopedEnv force("RUNG_FORCE_RUNG", "CPU");  // a rung's display name, as a person writes it: the rung cpu
    ScopedEnv no_ort_dir("RUNG_ORT_DIR", nullptr);
    // Read only by options that read rung's variables (the CLI's; an embedded engine's when it opts in).
    auto ignoring = probe(o);
    EXPECT_EQ(ignoring.forced_by, "");
    o.runtimes.read_environment = true;
    auto out = probe(o);
    EXPECT_EQ(out.chosen, "cpu");
    EXPECT_EQ(out.forced_by, "RUNG_FORCE_RUNG");
    EXPECT_THAT(out.about_line(), StartsWith("CPU (forced by RUNG_FORCE_RUNG) · ONNX Runtime 1.30.0"));
  }
  o.forced_rung = "no-such-rung";
  auto bad = run_probe(o);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("cannot force rung 'no-such-rung'"));
  // CPU is chosen when the sim rung is slow; nothing ranks below the floor to force.
  ScopedEnv slow("RUNG_SIM_EP_COMPUTE_DELAY_US", "20000");
  auto plain = options();
  plain.reprobe = true;
  plain.forced_rung = kSimRung;
  auto above = run_probe(plain);
  ASSERT_FALSE(above);
  EXPECT_THAT(above.error().message, HasSubstr("ranks above the chosen rung 'cpu'"));
}

TEST_F(ProbeTest, ForcingTheRungItWouldChooseAnywayIsAllowed) {
  // Only a rung above the chosen one is refused: the chosen rung itself may be forced,
  // named in any case (a plugin's name too): the decision carries the ladder's own id.
  auto o = options();
  o.acceptance_ratio = 1000;
  std::string shouted = kSimRung;
  for (auto& c : shouted) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_NE(shouted, kSimRung);
  o.forced_rung = shouted;
  auto same = run_probe(o);
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_EQ(same->chosen, kSimRung);
  EXPECT_FALSE(same->forced_by.empty());
}

TEST_F(ProbeTest, TheDefaultProbeModelIsTheSmallestRegistered) {
  // Registered largest first: the probe still measures the small one, and only it.
  auto o = options();
  const fs::path large = test::write_elementwise_model(dir_ / "large.onnx", {1, 256, 1024});
  ASSERT_GT(fs::file_size(large), fs::file_size(model_));
  o.models = {{"large", large, {}}, {"elementwise", model_, {}}};
  auto out = probe(o);
  ASSERT_EQ(out.floor.models.size(), 1u);
  EXPECT_EQ(out.floor.models[0].model, "elementwise");
}

TEST_F(ProbeTest, InProcessModeDecidesTooAndLeavesNoAttemptFile) {
  auto o = options();
  o.isolate = false;
  o.acceptance_ratio = 1000;
  auto out = probe(o);
  EXPECT_EQ(out.chosen, kSimRung);
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "attempt"));
}

TEST_F(ProbeTest, BackgroundProbeServesTheFloorUntilItReports) {
  ScopedEnv slow("RUNG_SIM_EP_COMPILE_DELAY_MS", "1500");
  auto o = options();
  o.acceptance_ratio = 1000;
  auto bg = BackgroundProbe::start(o);
  EXPECT_FALSE(bg->done());
  EXPECT_EQ(bg->current_rung(), "cpu");
  bg->wait();
  ASSERT_TRUE(bg->result().has_value());
  ASSERT_TRUE(*bg->result());
  EXPECT_EQ(bg->current_rung(), kSimRung);
}

// The fingerprint, one input at a time: each change alone, everything else held
// (the runtime file's size and time too), must give another fingerprint. The
// probe tests above change a build or a device, which moves several inputs at once.
void put(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// Rewrites a file's bytes keeping its size and modification time.
void same_size_other_bytes(const fs::path& file) {
  const auto time = fs::last_write_time(file);
  std::string bytes = test::read_file(file);
  bytes[0] = static_cast<char>(bytes[0] ^ 1);
  put(file, bytes);
  fs::last_write_time(file, time);
}

// A probe's inputs over real files: a runtime library, a model, a plugin.
struct ProbeInputs {
  explicit ProbeInputs(const fs::path& d) : dir(d) {
    put(dir / "lib" / "libonnxruntime.so.1", "a runtime build");
    put(dir / "model.onnx", "a model");
    put(dir / "plugin.so", "a plugin");
    put(dir / "lib" / "libprovider.so", "a provider library");
    put(dir / "model_i8.onnx", "a quantised form");
    put(dir / "tensors" / "x.pb", "a recorded tensor");
    build.library = dir / "lib" / "libonnxruntime.so.1";
    build.version = "1.30.0";
    build.api_version = 29;
    build.providers = {"CPUExecutionProvider"};
    hardware.cpu.model = "Test CPU";
    RungSpec provided = *find_rung("cpu");
    provided.name = "provided";
    provided.provider_libraries = {"libprovider.so"};
    ladder = {plugin_rung("sim", (dir / "plugin.so").string()), provided, *find_rung("cpu")};
    options.models = {{"model", dir / "model.onnx", {}, {{NumericForm::kInt8, dir / "model_i8.onnx"}}}};
    options.models[0].inputs.tensors_dir = dir / "tensors";
  }

  std::string fingerprint() const {
    FileHashCache hashes(dir / "hashes");  // never saved: every file is hashed afresh
    auto fp = make_fingerprint({&build, &hardware, &ladder, &options, probe_models}, hashes);
    EXPECT_TRUE(fp) << fp.error().message;
    return fp ? *fp : std::string();
  }

  fs::path dir;
  RuntimeBuild build;
  Hardware hardware;
  std::vector<RungSpec> ladder;
  ProbeOptions options;
  std::vector<std::string> probe_models;
};

class FingerprintTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-fingerprint"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FingerprintTest, NothingChangedIsTheSameFingerprint) {
  const ProbeInputs in(dir_);
  EXPECT_EQ(in.fingerprint(), in.fingerprint());
}

TEST_F(FingerprintTest, EachInputChangedAloneChangesIt) {
  const std::vector<std::tuple<const char*, const char*, std::function<void(ProbeInputs&)>>> changes = {
      {"runtime version", "the runtime: version 1.30.0 → 1.30.1", [](ProbeInputs& in) { in.build.version = "1.30.1"; }},
      {"runtime API version", "the runtime: API version 29 → 28", [](ProbeInputs& in) { in.build.api_version = 28; }},
      {"runtime path (same size and time)", "other/libonnxruntime.so.1; rung provided: provider_libraries",
       [](ProbeInputs& in) {
         const fs::path moved = in.dir / "other" / "libonnxruntime.so.1";
         put(moved, test::read_file(in.build.library));
         fs::last_write_time(moved, fs::last_write_time(in.build.library));
         in.build.library = moved;
       }},
      {"runtime size (same time)", "the runtime: its file",
       [](ProbeInputs& in) {
         const auto time = fs::last_write_time(in.build.library);
         put(in.build.library, "a longer runtime build");
         fs::last_write_time(in.build.library, time);
       }},
      {"runtime modification time", "the runtime: its file",
       [](ProbeInputs& in) { fs::last_write_time(in.build.library, fs::last_write_time(in.build.library) + std::chrono::seconds(1)); }},
      {"runtime providers", "the runtime: its providers", [](ProbeInputs& in) { in.build.providers.push_back("WebGpuExecutionProvider"); }},
      {"device identity", "the device: ", [](ProbeInputs& in) { in.hardware.cpu.model = "Another CPU"; }},
      {"a model's bytes (same size and time)", "model model: its file", [](ProbeInputs& in) { same_size_other_bytes(in.dir / "model.onnx"); }},
      {"a model's input spec", "model model: inputs", [](ProbeInputs& in) { in.options.models[0].inputs.dims["height"] = 640; }},
      {"a model registered", "model second: new", [](ProbeInputs& in) { in.options.models.push_back({"second", in.dir / "model.onnx", {}}); }},
      {"the probe models", "the probe models: [] → [\"model\"]", [](ProbeInputs& in) { in.probe_models = {"model"}; }},
      {"a rung left the ladder", "rung sim: gone", [](ProbeInputs& in) { in.ladder.erase(in.ladder.begin()); }},
      {"a plugin's bytes (same size and time)", "rung sim: its plugin library", [](ProbeInputs& in) { same_size_other_bytes(in.dir / "plugin.so"); }},
      {"acceptance ratio", "the settings: acceptance_ratio 1.0 → 1.5", [](ProbeInputs& in) { in.options.acceptance_ratio = 1.5; }},
      {"atol", "the settings: atol ", [](ProbeInputs& in) { in.options.tolerance.atol *= 2; }},
      {"rtol", "the settings: rtol ", [](ProbeInputs& in) { in.options.tolerance.rtol *= 2; }},
      {"threads", "the settings: threads 0 → 3", [](ProbeInputs& in) { in.options.threads = 3; }},
      {"runs", "the settings: runs 3 → 4", [](ProbeInputs& in) { in.options.probe_runs += 1; }},
      {"seed", "the settings: seed 20260919 → 20260920", [](ProbeInputs& in) { in.options.seed += 1; }},
      {"runtime bytes (same size and time)", "the runtime: its file", [](ProbeInputs& in) { same_size_other_bytes(in.build.library); }},
      {"a model's name", "model renamed: new; model model: gone", [](ProbeInputs& in) { in.options.models[0].name = "renamed"; }},
      {"a model's fixed input values", "model model: inputs", [](ProbeInputs& in) { in.options.models[0].inputs.values["x"] = {1.0}; }},
      {"a recorded tensor's bytes (same size and time)", "model model: inputs", [](ProbeInputs& in) { same_size_other_bytes(in.dir / "tensors" / "x.pb"); }},
      {"a recorded tensor added", "model model: inputs", [](ProbeInputs& in) { put(in.dir / "tensors" / "y.pb", "another tensor"); }},
      {"a derived form's bytes (same size and time)", "model model: derived", [](ProbeInputs& in) { same_size_other_bytes(in.dir / "model_i8.onnx"); }},
      {"a derived form's form", "model model: derived", [](ProbeInputs& in) { in.options.models[0].derived[0].form = NumericForm::kW8; }},
      {"a derived form added", "model model: derived", [](ProbeInputs& in) { in.options.models[0].derived.push_back({NumericForm::kA16W8, in.dir / "model_i8.onnx"}); }},
      {"a rung's display name", "rung sim: display", [](ProbeInputs& in) { in.ladder[0].display = "Another adapter"; }},
      {"a rung's provider", "rung provided: provider", [](ProbeInputs& in) { in.ladder[1].provider = "OtherExecutionProvider"; }},
      {"a rung's form", "rung provided: form", [](ProbeInputs& in) { in.ladder[1].form = ModelForm::kQuantized; }},
      {"a rung's name", "rung renamed: new; rung provided: gone", [](ProbeInputs& in) { in.ladder[1].name = "renamed"; }},
      {"a provider library's bytes (same size and time)", "rung provided: provider_libraries", [](ProbeInputs& in) { same_size_other_bytes(in.dir / "lib" / "libprovider.so"); }},
      {"minimum gain", "the settings: min_gain ", [](ProbeInputs& in) { in.options.min_gain += 0.01; }},
      {"confidence", "the settings: confidence ", [](ProbeInputs& in) { in.options.confidence = 0.95; }},
      {"time budget", "the settings: time_budget_s ", [](ProbeInputs& in) { in.options.time_budget_s += 1; }},
      {"maximum pairs", "the settings: max_pairs ", [](ProbeInputs& in) { in.options.max_pairs += 1; }},
      {"minimum placed share", "the settings: min_placed_share ", [](ProbeInputs& in) { in.options.min_placed_share += 0.01; }},
      {"deadline", "the settings: deadline_ms ", [](ProbeInputs& in) { in.options.probe_deadline += std::chrono::milliseconds(1); }},
      {"isolation", "the settings: isolate ", [](ProbeInputs& in) { in.options.isolate = !in.options.isolate; }},
  };
  int n = 0;
  for (const auto& [what, said, change] : changes) {
    SCOPED_TRACE(what);
    ProbeInputs in(dir_ / std::to_string(n++));
    const std::string before = in.fingerprint();
    change(in);
    const std::string after = in.fingerprint();
    EXPECT_NE(after, before);
    // A re-probe says what changed (probe/fingerprint.h), and only that.
    const auto changes_said = fingerprint_changes(nlohmann::json::parse(before), nlohmann::json::parse(after));
    const std::string all_said = fmt::format("{}", fmt::join(changes_said, "; "));
    EXPECT_THAT(all_said, HasSubstr(said));
    EXPECT_EQ(changes_said.size(), std::string(said).find("; ") == std::string::npos ? 1u : 2u) << all_said;
  }
  ProbeInputs same(dir_ / "same");
  EXPECT_TRUE(fingerprint_changes(nlohmann::json::parse(same.fingerprint()), nlohmann::json::parse(same.fingerprint())).empty());
  // A cache from a rung that wrote another kind of fingerprint: said, never nothing.
  EXPECT_EQ(fingerprint_changes(nlohmann::json("an old text"), nlohmann::json::parse(same.fingerprint())),
            std::vector<std::string>{"the fingerprint's form"});
}

// The attempt-file rule: a launch that finds an attempt left behind counts a
// strike for its rung; two in a row refuse it; a clean build clears them; an
// attempt from another fingerprint (another runtime, device or model) is not this one's.
class AttemptLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-attempts"); }
  void TearDown() override { fs::remove_all(dir_); }

  // What a launch that died while building `rung` leaves behind.
  void die_while_building(const std::string& rung, const std::string& fingerprint = "fp") {
    AttemptLedger ledger(dir_, fingerprint);
    ASSERT_TRUE(ledger.begin(rung, "model"));
  }

  fs::path dir_;
};

TEST_F(AttemptLedgerTest, OneStrikeIsNotRefusedTwoInARowAre) {
  die_while_building("sim");
  {
    AttemptLedger next(dir_, "fp");
    EXPECT_EQ(next.leftover(), "sim");
    EXPECT_EQ(next.strikes("sim"), 1);
    EXPECT_FALSE(next.refused("sim"));
    ASSERT_TRUE(next.begin("sim", "model"));  // and dies again
  }
  AttemptLedger third(dir_, "fp");
  EXPECT_EQ(third.strikes("sim"), 2);
  EXPECT_TRUE(third.refused("sim"));
  EXPECT_FALSE(third.refused("other"));
}

TEST_F(AttemptLedgerTest, ABuildThatEndsClearsItsStrikes) {
  die_while_building("sim");
  {
    AttemptLedger next(dir_, "fp");
    ASSERT_EQ(next.strikes("sim"), 1);
    ASSERT_TRUE(next.begin("sim", "model"));
    next.end("sim");  // this time it built
    EXPECT_EQ(next.strikes("sim"), 0);
  }
  die_while_building("sim");
  AttemptLedger after(dir_, "fp");
  EXPECT_EQ(after.strikes("sim"), 1);  // not in a row: one strike, not two
  EXPECT_FALSE(after.refused("sim"));
}

TEST_F(AttemptLedgerTest, AnAttemptUnderAnotherFingerprintIsNoStrike) {
  die_while_building("sim", "another");
  AttemptLedger ledger(dir_, "fp");
  EXPECT_EQ(ledger.leftover(), "");
  EXPECT_EQ(ledger.strikes("sim"), 0);
  EXPECT_FALSE(fs::exists(dir_ / "attempt"));
}

TEST_F(AttemptLedgerTest, StrikesUnderAnotherFingerprintAreForgotten) {
  die_while_building("sim");
  die_while_building("sim");
  ASSERT_TRUE(AttemptLedger(dir_, "fp").refused("sim"));
  EXPECT_EQ(AttemptLedger(dir_, "another").strikes("sim"), 0);
}

}  // namespace
}  // namespace rung
