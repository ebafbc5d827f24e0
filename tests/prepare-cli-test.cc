// `rung prepare` as a separate process: placements and model ids, a process
// killed in the middle of an engine build, two processes on one cache directory,
// the bundled Silero VAD files (control flow) on the compiled rung.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "model_builder.h"
#include "rung/software_gpu.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<fs::path> engines(const fs::path& cache, bool temporaries) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(cache / "engines", ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".onnx") continue;
    bool tmp = it->path().filename().string().find(".tmp.") != std::string::npos;
    if (tmp == temporaries) out.push_back(it->path());
  }
  return out;
}

class PrepareCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-prepare");
    test::make_plugin_dir(dir_);
    for (auto [name, width] : {std::pair{"det", 32}, std::pair{"embed", 128}}) {
      test::ModelBuilder b;
      b.input("x", {1, 8, width}).node("Relu", {"x"}, {"r"}).node("Mul", {"r", "x"}, {"y"}).output("y", {1, 8, width});
      b.save(dir_ / (std::string(name) + ".onnx"));
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string prepare(const std::string& env, const std::string& extra = "") {
    return prepare_models(env, "--model det=" + (dir_ / "det.onnx").string() + " --model embed=" + (dir_ / "embed.onnx").string() +
                                   " --role det=detector --role embed=embedder",
                          extra);
  }

  std::string prepare_models(const std::string& env, const std::string& models, const std::string& extra) {
    return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU " + env + " '" + test::cli_path().string() + "' prepare " + models +
           " --cache-dir " + (dir_ / "cache").string() + " --ort-dir " +
           test::runtime_dir("1.30.0").string() + " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() +
           " --plugin-dir " + (dir_ / "plugins").string() + " --accept-ratio 1000 " + extra;
  }

  fs::path dir_;
};

// prepare takes --deadline like probe: a provider that hangs costs the deadline named,
// not the default three minutes, and the CPU serves.
TEST_F(PrepareCliTest, ADeadlineBoundsAHangingProviderAsProbesDoes) {
  auto r = test::run_command(prepare("RUNG_SIM_EP_HANG_AT=compile", "--deadline 2 --json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rung"], "cpu") << r.out;
  EXPECT_THAT(j["about"].get<std::string>(), HasSubstr("rung_sim_ep timed out")) << r.out;
  // Out of its range: refused by name, before any work.
  auto bad = test::run_command(prepare("", "--deadline 0"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--deadline"));
}

TEST_F(PrepareCliTest, ShowsWhereEachModelRunsAndWhatItComputes) {
  auto r = test::run_command(prepare("", "--json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rung"], "rung_sim_ep");
  EXPECT_EQ(j["engines"]["total"], 2);
  EXPECT_EQ(j["engines"]["landed"], 2);
  ASSERT_EQ(j["models"].size(), 2u);
  EXPECT_EQ(j["models"][0]["model"], "det");
  EXPECT_EQ(j["models"][0]["role"], "detector");
  EXPECT_EQ(j["models"][0]["model_id"], "det");
  EXPECT_EQ(j["models"][1]["role"], "embedder");
  EXPECT_EQ(j["models"][1]["rung"], "rung_sim_ep");
  EXPECT_EQ(j["models"][1]["model_id"], "embed");
  // stderr is not a terminal here: no count redrawn in place, no escape sequence, nothing but what went wrong (nothing).
  EXPECT_THAT(r.err, Not(HasSubstr("Preparing engines")));
  EXPECT_THAT(r.err, Not(HasSubstr("\r")));
  EXPECT_THAT(r.err, Not(HasSubstr("\033")));
}

TEST_F(PrepareCliTest, KillingTheProcessMidBuildLeavesNothingTheNextStartWouldLoad) {
  // Each compile takes 2 s: the probe's own session, then each engine in turn, in a compile worker.
  auto pid_file = dir_ / "pid";
  test::run_command("(" + prepare("RUNG_SIM_EP_COMPILE_DELAY_MS=2000") + " >/dev/null 2>&1 & echo $! >" + pid_file.string() +
                    ") >/dev/null 2>&1");
  // Only this test's worker (its job lives under this test's directory); "[r]ung" keeps pgrep
  // from finding the shell that runs it.
  const std::string building = "pgrep -f '[r]ung-probe-worker compile " + dir_.string() + "'";
  bool caught = false;
  for (int i = 0; i < 200 && !caught; ++i) {
    caught = test::run_command(building).exit_code == 0;
    if (!caught) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(caught) << "no engine build started";
  test::run_command("kill -9 $(cat " + pid_file.string() + ")");
  // The worker is tied to its parent (PR_SET_PDEATHSIG): it goes with it instead of finishing a compile nobody will rename.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = test::run_command(building).exit_code != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "the compile worker outlived the process that started it";
  EXPECT_TRUE(engines(dir_ / "cache", /*temporaries=*/false).empty()) << "a final engine file exists after the kill";
  // A writer killed between write and rename leaves a temporary: plant one where the killed build put its engines.
  std::vector<fs::path> build_dirs;
  for (const auto& e : fs::directory_iterator(dir_ / "cache" / "engines")) {
    if (e.is_directory()) build_dirs.push_back(e.path());
  }
  ASSERT_EQ(build_dirs.size(), 1u);
  std::ofstream(build_dirs[0] / "det.tmp.12345.onnx") << "half an engine";
  ASSERT_EQ(engines(dir_ / "cache", /*temporaries=*/true).size(), 1u);
  // The next start rebuilds, and clears what was half-done.
  auto next = test::run_command(prepare("", "--json"));
  ASSERT_EQ(next.exit_code, 0) << next.err;
  auto j = nlohmann::json::parse(next.out);
  EXPECT_EQ(j["engines"]["landed"], 2);
  EXPECT_EQ(j["models"][0]["rung"], "rung_sim_ep");
  EXPECT_EQ(engines(dir_ / "cache", false).size(), 2u);
  EXPECT_TRUE(engines(dir_ / "cache", true).empty());
}

TEST_F(PrepareCliTest, TwoProcessesOnOneCacheDirectoryTearNothing) {
  const std::string env = "RUNG_SIM_EP_COMPILE_DELAY_MS=400";
  auto a = dir_ / "a", b = dir_ / "b";
  test::run_command("(" + prepare(env, "--json") + " >" + a.string() + ".out 2>&1; echo $? >" + a.string() + ".rc) & " +
                    prepare(env, "--json") + " >" + b.string() + ".out 2>&1; echo $? >" + b.string() + ".rc; wait");
  EXPECT_EQ(test::read_file(a.string() + ".rc"), "0\n") << test::read_file(a.string() + ".out");
  EXPECT_EQ(test::read_file(b.string() + ".rc"), "0\n") << test::read_file(b.string() + ".out");
  EXPECT_EQ(engines(dir_ / "cache", false).size(), 2u);
  EXPECT_TRUE(engines(dir_ / "cache", true).empty());
  // And a third start loads both engines as they are.
  auto c = test::run_command(prepare("", "--json"));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(nlohmann::json::parse(c.out)["models"][1]["rung"], "rung_sim_ep");
}

// An engine that fails to build: the progress line names the rung that serves the model instead, and why, as the table does.
TEST_F(PrepareCliTest, AFailedEngineBuildIsNamedWithTheRungThatServesTheModelAndWhy) {
  test::ModelBuilder b;  // larger than det, which the probe times: only its engine build meets the rejection
  b.input("x", {1, 8, 64}).node("Relu", {"x"}, {"r"}, "relu").node("Add", {"r", "x"}, {"y"}, "poison_add").output("y", {1, 8, 64});
  b.save(dir_ / "poisoned.onnx");
  auto r = test::run_command(prepare_models("RUNG_SIM_EP_REJECT_NODES=poison",
                                            "--model det=" + (dir_ / "det.onnx").string() + " --model poisoned=" + (dir_ / "poisoned.onnx").string(), ""));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string stays =
      "poisoned stays on CPU: its rung_sim_ep engine failed to build (RungSimAccelerator: the compiler rejects node 'poison_add')";
  // Each failure said once, as it happens; no count on a stderr that is not a terminal.
  EXPECT_EQ(r.err, "rung: " + stays + "\nrung: some models did not get the chosen rung's engine (see above)\n");
  EXPECT_THAT(r.out, HasSubstr("rung: rung_sim_ep ("));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("  det +- +rung_sim_ep +det +the chosen rung's engine\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "  poisoned +- +CPU +poisoned +rung_sim_ep engine failed: RungSimAccelerator: the compiler rejects node 'poison_add'"));
}

// An input spec the smallest model cannot take (its values name an input it lacks)
// is an input error, exit 2, naming the model and the key; the probe goes on with
// the next model, so only that model is held back, not every model.
TEST_F(PrepareCliTest, ASpecTheSmallestModelRefusesIsAnInputErrorAndTheOthersStillClimb) {
  const fs::path spec = dir_ / "det-spec.json";
  std::ofstream(spec) << R"({"values": {"sr": [16000]}})";
  auto r = test::run_command(prepare("", "--input-spec det=" + spec.string()));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("rung: model det: the CPU floor cannot run"));
  EXPECT_THAT(r.err, HasSubstr("values key 'sr' is not an input of the model"));
  EXPECT_THAT(r.err, HasSubstr("rung: a model's inputs were refused (see above)"));
  EXPECT_THAT(r.out, HasSubstr("rung: rung_sim_ep ("));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("  embed +- +rung_sim_ep +embed +"));

  // Every model refused: nothing above the floor could be tried, and the reason says why rather than "not faster".
  auto both = test::run_command(prepare("", "--input-spec det=" + spec.string() + " --input-spec embed=" + spec.string()));
  EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
  EXPECT_THAT(both.err, HasSubstr("rung: model embed: the CPU floor cannot run"));
  EXPECT_THAT(both.out, HasSubstr("rung: CPU (the floor could not run 2 probe models: model "));
}

// The rung below the chosen one serves a model whose engine failed, unless it cannot open it either: the line says
// so when a job finds out. With the software GPU lent to the workers, the probe takes WebGPU as the fallback, but the
// host process that opens sessions has no Vulkan driver (the adapter is lent to child processes only).
TEST_F(PrepareCliTest, AFailedEngineBuildNamesTheFallbackRungAndThenWhereTheModelReallyRuns) {
  if (auto gpu = find_software_gpu({std::nullopt, test::binary_dir(), false}); !gpu) {
    GTEST_SKIP() << "the software GPU was not fetched (tools/fetch-deps.sh fetches it unless RUNG_SKIP_SOFTWARE_GPU=1): " << gpu.error().message;
  }
  test::ModelBuilder b;
  b.input("x", {1, 8, 64}).node("Relu", {"x"}, {"r"}, "relu").node("Add", {"r", "x"}, {"y"}, "poison_add").output("y", {1, 8, 64});
  b.save(dir_ / "poisoned.onnx");
  auto r = test::run_command(prepare_models("RUNG_SIM_EP_REJECT_NODES=poison RUNG_SOFTWARE_GPU=1",
                                            "--model det=" + (dir_ / "det.onnx").string() + " --model poisoned=" + (dir_ / "poisoned.onnx").string(), ""));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string build_failed = "its rung_sim_ep engine failed to build (RungSimAccelerator: the compiler rejects node 'poison_add')";
  const std::string landed = "rung: poisoned stays on WebGPU on lavapipe (software): " + build_failed + "\n";
  const std::string opened = "\nrung: poisoned stays on CPU: " + build_failed +
                             "; WebGPU on lavapipe (software) failed to open it (Failed to get a WebGPU adapter: No supported adapters)\n";
  EXPECT_THAT(r.err, HasSubstr(landed));
  EXPECT_THAT(r.err, HasSubstr(opened));
  EXPECT_LT(r.err.find(landed), r.err.find(opened));
  // The long reason is a note under the table, the row naming it.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("  poisoned +- +CPU +poisoned +\\[1\\]\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  [1] rung_sim_ep engine failed: "));
}

// Control flow (If) kept every Silero VAD file off the compiled rung; the compile-ready rewrite gives each its engine.
TEST_F(PrepareCliTest, EveryBundledSileroVadFileGetsAnEngineBuiltFromARewrittenGraph) {
  const fs::path spec = test::fixtures_dir().parent_path().parent_path() / "specs" / "silero_vad.json";
  // The half-precision export takes no sample rate: a spec may name only inputs its model has.
  const fs::path without_rate = dir_ / "silero_vad_half.json";
  std::ofstream(without_rate) << R"({"dims": {"input:1": 512, "state:1": 1}})";
  std::string models;
  const std::vector<std::string> names = {"silero_vad", "silero_vad_half", "silero_vad_16k_op15", "silero_vad_op18_ifless"};
  for (const auto& name : names) {
    models += fmt::format(" --model {0}={1} --input-spec {0}={2}", name, test::model_path("silero-vad/" + name + ".onnx").string(),
                          (name == "silero_vad_half" ? without_rate : spec).string());
  }
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG '" + test::cli_path().string() + "' prepare" + models +
                             " --cache-dir " + (dir_ / "cache").string() + " --ort-dir " + test::runtime_dir("1.30.0").string() +
                             " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --plugin-dir " +
                             (dir_ / "plugins").string() + " --accept-ratio 1000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["engines"]["landed"], 4);
  ASSERT_EQ(j["models"].size(), names.size());
  for (const auto& m : j["models"]) {
    EXPECT_EQ(m["rung"], "rung_sim_ep") << m.dump();
    EXPECT_THAT(m["reason"].get<std::string>(), HasSubstr("the chosen rung's engine, built from a rewritten graph (")) << m.dump();
  }
}

}  // namespace
}  // namespace rung
