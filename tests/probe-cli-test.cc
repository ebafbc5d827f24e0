// `rung probe` driven as a user drives it: the table, the cache on a second run,
// in-process launches that die, two processes on one cache directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model_builder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class ProbeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-probe-cli");
    test::make_plugin_dir(dir_);
    test::ModelBuilder b;
    b.input("x", {1, 32, 32}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 32, 32});
    b.save(dir_ / "tiny.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The CLI with this test's model, cache, runtime, fixture device and plugin directory.
  std::string probe(const std::string& env, const std::string& extra) {
    return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG " + env + " '" + test::cli_path().string() + "' probe --model tiny=" +
               (dir_ / "tiny.onnx").string() + " --cache-dir " + (dir_ / "cache").string() + " --ort-dir " +
               test::runtime_dir("1.30.0").string() + " --hardware-root " +
               (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --plugin-dir " + (dir_ / "plugins").string() +
               " " + extra;
  }

  fs::path dir_;
};

TEST_F(ProbeCliTest, PrintsOneRowPerRungThenReadsTheCacheOnTheSecondRun) {
  auto first = test::run_command(probe("", "--accept-ratio 1000"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // The sim rung compiles engines: the rungs below it were tried for a fallback and failed here.
  // The first line sums up; the table says why each failed.
  if (test::kFetched130CarriesGpuProviders) {
    EXPECT_THAT(first.out, StartsWith("rung_sim_ep · ONNX Runtime 1.30.0 · 2 rungs failed (see the table)\n"));  // CUDA and WebGPU
    EXPECT_THAT(first.out, HasSubstr("failed: ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) is not beside libonnxruntime.so.1"));
  } else {  // linux/arm64's build has no rung below the accelerator but the floor
    EXPECT_THAT(first.out, StartsWith("rung_sim_ep · ONNX Runtime 1.30.0\n"));
    EXPECT_THAT(first.out, Not(HasSubstr("failed")));
  }
  EXPECT_THAT(first.out, HasSubstr("CPU (floor)"));
  // The floor's placed cell is what ran on it: every node of the model, by the CPU.
  EXPECT_TRUE(std::regex_search(first.out, std::regex(R"(CPU \(floor\)\s+tiny\s+[0-9.]+\s+[0-9.]+\s+1\.00×\s+2/2 100%\s+floor)"))) << first.out;
  EXPECT_THAT(first.out, HasSubstr("rung_sim_ep"));
  EXPECT_THAT(first.out, HasSubstr("taken"));
  if (test::kFetched130CarriesGpuProviders) {
    EXPECT_THAT(first.out, HasSubstr("not tried: a higher rung was taken"));
  }
  EXPECT_THAT(first.out, ::testing::Not(HasSubstr("from the cache")));
  auto second = test::run_command(probe("", "--accept-ratio 1000"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("(from the cache " + (dir_ / "cache" / "probe.json").string() + ": nothing changed"));
  auto forced = test::run_command(probe("", "--accept-ratio 1000 --force --json"));
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  auto j = nlohmann::json::parse(forced.out);
  EXPECT_EQ(j["from_cache"], false);
  EXPECT_EQ(j["chosen"], "rung_sim_ep");
}

TEST_F(ProbeCliTest, HonestTableOnThisMachineWithoutPlugins) {
  auto r = test::run_command("env -u RUNG_ORT_DIR '" + test::cli_path().string() + "' probe --model tiny=" +
                             (dir_ / "tiny.onnx").string() + " --cache-dir " + (dir_ / "cache").string() + " --ort-dir " +
                             test::runtime_dir("1.30.0").string() + " --hardware-root " +
                             (test::fixtures_dir() / "hardware" / "cpu-vm").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (!test::kFetched130CarriesGpuProviders) {  // linux/arm64: the CPU alone, nothing else to try
    EXPECT_THAT(r.out, StartsWith("CPU · ONNX Runtime 1.30.0\n"));
    EXPECT_THAT(r.out, Not(HasSubstr("failed")));
    return;
  }
  EXPECT_THAT(r.out, StartsWith("CPU · ONNX Runtime 1.30.0 · 3 rungs failed (see the table)\n"));
  EXPECT_THAT(r.out, HasSubstr("failed: ONNX Runtime's TensorRT provider (libonnxruntime_providers_tensorrt.so) is not beside libonnxruntime.so.1"));
  EXPECT_THAT(r.out, HasSubstr("failed: ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) is not beside libonnxruntime.so.1"));
}

// A Mali board walks WebGPU before the floor: a real try with the build that carries it (no
// adapter here: refused with the reason), passed over when the build has no WebGPU.
TEST_F(ProbeCliTest, AMaliBoardTriesWebGpuThenTakesTheFloor) {
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU '" + test::cli_path().string() +
                             "' probe --json --model tiny=" + (dir_ / "tiny.onnx").string() + " --cache-dir " +
                             (dir_ / "cache").string() + " --ort-dir " + test::runtime_dir("1.30.0").string() +
                             " --hardware-root " + (test::fixtures_dir() / "hardware" / "rockchip-rk3588-mali").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chosen"], "cpu");
  EXPECT_EQ(j["floor"]["rung"], "cpu");
  if (test::kFetched130CarriesGpuProviders) {
    ASSERT_EQ(j["rungs"].size(), 1u) << r.out;
    EXPECT_EQ(j["rungs"][0]["rung"], "webgpu");
    EXPECT_EQ(j["rungs"][0]["verdict"], "failed");
    EXPECT_THAT(j["rungs"][0]["reason"].get<std::string>(), HasSubstr("WebGPU adapter"));
  } else {  // linux/arm64's build carries no WebGPU: nothing above the floor is taken
    for (const auto& row : j["rungs"]) EXPECT_NE(row["verdict"], "taken") << r.out;
  }
}

TEST_F(ProbeCliTest, InProcessLaunchesThatDieTwiceRefuseTheRung) {
  const std::string env = "RUNG_SIM_EP_ABORT_AT=compile";
  // Each launch dies inside the sim rung's build: a real crash of the whole process.
  auto first = test::run_command(probe(env, "--in-process"));
  EXPECT_EQ(first.exit_code, 128 + 6) << first.out << first.err;  // SIGABRT
  EXPECT_TRUE(fs::exists(dir_ / "cache" / "attempt"));
  auto second = test::run_command(probe(env, "--in-process"));
  EXPECT_EQ(second.exit_code, 128 + 6) << second.out << second.err;
  EXPECT_THAT(second.err, HasSubstr("the last launch died while attempting rung_sim_ep: strike 1 of 2"));
  auto third = test::run_command(probe(env, "--in-process --json"));
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_THAT(third.err, HasSubstr("strike 2 of 2"));
  auto j = nlohmann::json::parse(third.out);
  EXPECT_EQ(j["rungs"][0]["rung"], "rung_sim_ep");
  EXPECT_EQ(j["rungs"][0]["verdict"], "refused");
  EXPECT_EQ(j["chosen"], "cpu");
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "attempt"));
  // Refused is cached like any failure.
  auto fourth = test::run_command(probe(env, "--in-process --json"));
  ASSERT_EQ(fourth.exit_code, 0) << fourth.err;
  EXPECT_EQ(nlohmann::json::parse(fourth.out)["from_cache"], true);
}

TEST_F(ProbeCliTest, TwoProcessesOnOneCacheDirectoryOneProbesTheOtherWaits) {
  // A slow compile keeps the first probe busy while the second starts.
  const std::string env = "RUNG_SIM_EP_COMPILE_DELAY_MS=1500";
  auto a = dir_ / "a", b = dir_ / "b";
  auto r = test::run_command("(" + probe(env, "--json") + " >" + a.string() + ".out 2>" + a.string() + ".err; echo $? >" +
                             a.string() + ".rc) & sleep 0.3; " + probe(env, "--json") + " >" + b.string() + ".out 2>" +
                             b.string() + ".err; echo $? >" + b.string() + ".rc; wait");
  EXPECT_EQ(test::read_file(a.string() + ".rc"), "0\n") << test::read_file(a.string() + ".err");
  EXPECT_EQ(test::read_file(b.string() + ".rc"), "0\n") << test::read_file(b.string() + ".err");
  auto ja = nlohmann::json::parse(test::read_file(a.string() + ".out"));
  auto jb = nlohmann::json::parse(test::read_file(b.string() + ".out"));
  EXPECT_EQ(ja["chosen"], jb["chosen"]);
  // Exactly one of them probed; the other waited for its answer and read it.
  EXPECT_NE(ja["from_cache"], jb["from_cache"]);
  // The waiter names whom it waits for, and for how long at most. Which one waits is the order the
  // two took the lock in (under qemu the second can start first): the one that read the other's answer.
  const fs::path waiter = ja["from_cache"] == true ? a : b;
  EXPECT_THAT(test::read_file(waiter.string() + ".err"), ::testing::ContainsRegex("process [0-9]+ \\(.*rung(-full)? probe .*\\) is probing this cache directory; waiting up to [0-9]+ s"));
  EXPECT_TRUE(nlohmann::json::accept(test::read_file(dir_ / "cache" / "probe.json")));
}

// probe and prepare decide under the same threads (the engine's inference pool), so
// they share one cache and neither throws the other's away; when the cache cannot
// serve, the probe says which of the decision's inputs changed, and only those.
TEST_F(ProbeCliTest, ProbeAndPrepareShareTheCacheAndAReprobeSaysWhatChanged) {
  auto first = test::run_command(probe("", ""));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string prepare = probe("", "");
  prepare.replace(prepare.find("' probe "), 8, "' prepare ");
  auto prepared = test::run_command(prepare);
  ASSERT_EQ(prepared.exit_code, 0) << prepared.err;
  EXPECT_THAT(prepared.err, Not(HasSubstr("ignored the cache")));
  auto again = test::run_command(probe("", ""));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("(from the cache ")) << "prepare threw the probe's decision away";
  EXPECT_THAT(again.err, Not(HasSubstr("ignored the cache")));

  auto more_runs = test::run_command(probe("", "--runs 4"));
  ASSERT_EQ(more_runs.exit_code, 0) << more_runs.err;
  EXPECT_THAT(more_runs.err, HasSubstr("ignored the cache: " + (dir_ / "cache" / "probe.json").string() +
                                       ": was decided under other conditions: the settings: runs 3 → 4\n"));
  test::ModelBuilder b;
  b.input("x", {1, 32, 32}).node("Relu", {"x"}, {"r"}).node("Mul", {"r", "x"}, {"y"}).output("y", {1, 32, 32});
  b.save(dir_ / "tiny.onnx");
  auto new_model = test::run_command(probe("", "--runs 4"));
  ASSERT_EQ(new_model.exit_code, 0) << new_model.err;
  EXPECT_THAT(new_model.err, HasSubstr("was decided under other conditions: model tiny: its file\n"));
}

TEST_F(ProbeCliTest, BadArgumentsAreUsageErrors) {
  auto r = test::run_command(probe("", "--runs 0"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--runs: 0 is out of range; expected a whole number of runs from 1 to 1000"));
  r = test::run_command(probe("", "--use-rung warp-drive"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot force rung 'warp-drive'"));
  r = test::run_command(probe("", "--input-spec nobody=" + (dir_ / "x.json").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("naming a registered model"));
}

// A model that is not there is a usage error named before anything runs (tests/exit-codes-cli-test.cc holds every command).
TEST_F(ProbeCliTest, MissingModelIsNamedAndTheExitIsTwoBeforeAnyProbe) {
  auto r = test::run_command(probe("", "--model gone=" + (dir_ / "gone.onnx").string() + " --probe-model gone --probe-model tiny"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("rung: model gone=" + (dir_ / "gone.onnx").string() + ": " + (dir_ / "gone.onnx").string() + ": does not exist"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace rung
