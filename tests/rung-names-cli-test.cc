// A rung is named the same way on every face that takes one (rung/rung_names.h):
// its id or display name in any case ("CPU", "Cpu", "TensorRT", a plugin's
// "RUNG_SIM_EP"), and what is recorded is always the ladder's own id. A name that
// is no rung is exit 2 naming it, on every face. (conform's --rung is held by
// ConformGridTest; the C++ library's forced rung by ProbeTest.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "model_builder.h"
#include "parity_test_support.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test::q;

class RungNamesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-names-cli");
    test::make_plugin_dir(dir_);
    test::ModelBuilder b(17);
    b.input("x", {1, 8}).node("Relu", {"x"}, {"y"}).output("y", {1, 8});
    b.save(dir_ / "a.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static test::CommandResult rung(const std::string& env, const std::string& args) {
    return test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU " + env + " " + q(test::cli_path()) + " " +
                             args);
  }
  std::string device() const {
    return " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm") + " --ort-dir " + q(test::runtime_dir("1.30.0"));
  }
  std::string probe(const std::string& cache) const {
    return "probe --in-process --model a=" + q(dir_ / "a.onnx") + " --cache-dir " + q(dir_ / cache) + device() + " --json";
  }
  std::string side(const std::string& rung_name) const { return test::side(dir_ / "a.onnx", "1.30.0", ",rung=" + rung_name); }

  fs::path dir_;
};

TEST_F(RungNamesCliTest, ProbeAndPrepareForceARungNamedInAnyCase) {
  for (const char* named : {"CPU", "Cpu", "cpu"}) {
    auto r = rung("", probe(std::string("cache-") + named) + " --use-rung " + named);
    ASSERT_EQ(r.exit_code, 0) << named << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["chosen"], "cpu") << named;
    EXPECT_EQ(j["forced_by"], "configuration") << named;
  }
  auto by_env = rung("RUNG_FORCE_RUNG=cPu", probe("cache-env"));
  ASSERT_EQ(by_env.exit_code, 0) << by_env.err;
  EXPECT_EQ(nlohmann::json::parse(by_env.out)["chosen"], "cpu");
  EXPECT_EQ(nlohmann::json::parse(by_env.out)["forced_by"], "RUNG_FORCE_RUNG");

  auto prepared = rung("", "prepare --in-process --model a=" + q(dir_ / "a.onnx") + " --cache-dir " + q(dir_ / "cache-prepare") + device() +
                               " --use-rung CPU --json");
  ASSERT_EQ(prepared.exit_code, 0) << prepared.err;
  EXPECT_EQ(nlohmann::json::parse(prepared.out)["rung"], "cpu");

  // One letter more is no rung: refused before anything is probed or cached.
  auto wrong = rung("", probe("cache-wrong") + " --use-rung CPUX");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_THAT(wrong.err, HasSubstr("cannot force rung 'CPUX'"));
  EXPECT_FALSE(fs::exists(dir_ / "cache-wrong" / "probe.json"));
}

// bench: a rung named twice in two cases is measured once; a plugin's name in capitals is the plugin's rung.
TEST_F(RungNamesCliTest, BenchMeasuresEachRungOnceHoweverItIsWritten) {
  const fs::path csv = dir_ / "rows.csv";
  auto r = rung("", "bench a=" + q(dir_ / "a.onnx") + " --rung Cpu --rung RUNG_SIM_EP --rung cpu --runs 1 --warmup 0 --plugin-dir " + q(dir_ / "plugins") +
                        device() + " --csv " + q(csv));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream rows(test::read_file(csv));
  std::string line;
  std::getline(rows, line);
  ASSERT_THAT(line, ::testing::StartsWith("model,form,file,rung,"));
  std::vector<std::string> rungs;
  while (std::getline(rows, line)) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_GT(cells.size(), 3u) << line;
    rungs.push_back(cells[3]);
  }
  EXPECT_EQ(rungs, (std::vector<std::string>{"cpu", "rung_sim_ep"}));

  auto wrong = rung("", "bench a=" + q(dir_ / "a.onnx") + " --rung Cpux --runs 1" + device());
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_THAT(wrong.err, HasSubstr("no rung 'Cpux' on this device"));
}

TEST_F(RungNamesCliTest, ParitySidesNameTheirRungInAnyCaseAndANameThatIsNoRungIsAUsageError) {
  auto r = rung("", "parity --ref " + side("CPU") + " --cand " + side("cpu") + " --random 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_THAT(j["ref"].get<std::string>(), HasSubstr(" · CPU · "));
  EXPECT_EQ(j["ref"].get<std::string>(), j["cand"].get<std::string>()) << "one rung, however it was written";

  auto wrong = rung("", "parity --ref " + side("cpux") + " --cand " + side("cpu") + " --random 1");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_THAT(wrong.err, HasSubstr("no rung 'cpux': rung's rungs are tensorrt, cuda, "));
  EXPECT_EQ(wrong.out, "");
}

// The registry stores the rung's id, so a release added as "CUDA" is the one listed as cuda.
TEST_F(RungNamesCliTest, TheRegistryRecordsTheRungsIdHoweverItWasWritten) {
  const std::string reg = "registry --registry " + q(dir_ / "r.sqlite") + " ";
  const std::string add = reg + "add a=" + q(dir_ / "a.onnx") + " --made-by test --ort 1.30.0 --hardware-root " +
                          q(test::fixtures_dir() / "hardware" / "cpu-vm") + " --json";
  auto cuda = rung("", add + " --version 1.0 --rung CUDA");
  ASSERT_EQ(cuda.exit_code, 0) << cuda.out << cuda.err;
  EXPECT_EQ(nlohmann::json::parse(cuda.out)["release"]["target"]["rung"], "cuda");
  auto plugin = rung("", add + " --version 1.1 --rung RUNG_SIM_EP --plugin " + q(dir_ / "plugins" / "librung_sim_ep.so"));
  ASSERT_EQ(plugin.exit_code, 0) << plugin.out << plugin.err;
  EXPECT_EQ(nlohmann::json::parse(plugin.out)["release"]["target"]["rung"], "rung_sim_ep");
  auto wrong = rung("", add + " --version 1.2 --rung cudax");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.err, HasSubstr("'cudax' is not a rung"));
}

}  // namespace
}  // namespace rung
