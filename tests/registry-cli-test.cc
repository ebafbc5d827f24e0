// `rung registry` as a user runs it: real `rung bench` records and `rung
// parity` reports registered as evidence, exit codes, verify's verdicts, the
// fleet view; and concurrent writers (real processes) on both databases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "os/file_hash.h"
#include "parity_test_support.h"
#include "postgres_server.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

std::string rung_cli(const std::string& args) {
  return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_REGISTRY " + q(test::cli_path()) + " " + args;
}

class RegistryCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-registry-cli");
    plugins_ = test::make_plugin_dir(dir_);
    registry_ = "sqlite:" + (dir_ / "registry.sqlite").string();
    test::write_elementwise_model(dir_ / "tiny.onnx", {1, 64});
  }
  void TearDown() override { fs::remove_all(dir_); }

  test::CommandResult registry(const std::string& args) {
    return test::run_command(rung_cli("registry " + args + " --registry '" + registry_ + "'"));
  }
  // The sim accelerator's release of tiny.onnx, for this machine and ONNX Runtime 1.30.0.
  std::string add_sim(const std::string& artifact, const std::string& more = "") {
    return "add tiny=" + q(artifact) + " --version 1.0 --rung rung_sim_ep --plugin " + q(plugins_ / "librung_sim_ep.so") + " --ort-dir " +
           q(test::runtime_dir("1.30.0")) + " --made-by 'rung bench (the f32 file as fetched)' --setting source=npm " + more;
  }

  fs::path dir_, plugins_;
  std::string registry_;
};

TEST_F(RegistryCliTest, BenchAndParityEvidenceRegisterAndVerify) {
  const fs::path model = dir_ / "tiny.onnx";
  // Measured here, on the CPU and the simulated accelerator.
  auto bench = test::run_command(rung_cli("bench tiny=" + q(model) + " --rung rung_sim_ep --plugin-dir " + q(plugins_) + " --ort-dir " +
                                          q(test::runtime_dir("1.30.0")) + " --runs 3 --warmup 0 --json " + q(dir_ / "tiny.bench.json")));
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  auto sim = test::parity("--ref " + test::side(model) + " --cand " + test::sim_ep_side(model) + " --random 2 --json " + q(dir_ / "sim.parity.json"));
  ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
  auto cross = test::parity("--ref " + test::side(model) + " --cand " + test::side(model, "1.28.2") + " --random 1 --json " + q(dir_ / "cross.parity.json"));
  ASSERT_EQ(cross.exit_code, 0) << cross.out << cross.err;
  auto sides = nlohmann::json::parse(test::read_file(dir_ / "cross.parity.json"))["sides"];
  EXPECT_EQ(sides["ref"]["runtime"]["version"], "1.30.0");
  EXPECT_EQ(sides["cand"]["runtime"]["version"], "1.28.2");
  EXPECT_EQ(sides["cand"]["model_sha256"], *sha256_of_file(model));
  EXPECT_FALSE(sides["cand"]["device"].get<std::string>().empty());

  auto added = registry(add_sim(model.string(), "--bench " + q(dir_ / "tiny.bench.json") + " --parity " + q(dir_ / "sim.parity.json")));
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  EXPECT_THAT(added.out, HasSubstr("added"));
  EXPECT_THAT(added.out, HasSubstr("/ ORT 1.30.0 / rung_sim_ep"));
  EXPECT_THAT(added.out, HasSubstr("sha256 " + *sha256_of_file(model)));
  EXPECT_THAT(added.out, HasSubstr("rung_sim_ep: p50"));
  EXPECT_THAT(added.out, HasSubstr("parity PASS"));

  // The cross-build report is evidence about ORT 1.28.2, not about this release's 1.30.0.
  auto refused = registry("add tiny=" + q(model) + " --version 1.0 --ort-dir " + q(test::runtime_dir("1.30.0")) +
                          " --made-by 'as fetched' --parity " + q(dir_ / "cross.parity.json"));
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("measured on ORT 1.28.2, release targets 1.30.0"));

  // Rebuilt by the same recipe into other bytes: refused, naming both.
  test::write_elementwise_model(dir_ / "rebuilt.onnx", {1, 65});
  auto rebuilt = registry(add_sim((dir_ / "rebuilt.onnx").string()));
  EXPECT_EQ(rebuilt.exit_code, 1);
  EXPECT_THAT(rebuilt.err, HasSubstr(*sha256_of_file(model)));
  EXPECT_THAT(rebuilt.err, HasSubstr(*sha256_of_file(dir_ / "rebuilt.onnx")));

  auto show = registry("show tiny@1.0 --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  auto j = nlohmann::json::parse(show.out);
  EXPECT_EQ(j["evidence"].size(), 2u);
  EXPECT_EQ(j["target"]["rung"], "rung_sim_ep");
  EXPECT_THAT(j["environment"]["providers"]["rung_sim_ep"].get<std::string>(), HasSubstr("sha256:"));
  EXPECT_EQ(j["recipe"]["settings"]["source"], "npm");

  auto verify = registry("verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("1 ok"));
}

TEST_F(RegistryCliTest, VerifyExitsOneForMissingButNotForNotRetained) {
  const fs::path plan = dir_ / "detector.plan";
  std::ofstream(plan) << "compiled engine bytes";
  auto add_plan = registry("add det=" + q(plan) + " --version 2 --rung cpu --ort 1.30.0 --device 'linux; cpu Test' --made-by trtexec"
                           " --opaque 'tensorrt plan: weights are not inspectable' --not-retained '119 MB, gitignored'");
  ASSERT_EQ(add_plan.exit_code, 0) << add_plan.err;
  EXPECT_THAT(add_plan.out, HasSubstr("opaque: tensorrt plan: weights are not inspectable"));
  auto add_model = registry("add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device 'linux; cpu Test' --made-by export");
  ASSERT_EQ(add_model.exit_code, 0) << add_model.err;
  fs::remove(plan);
  auto fine = registry("verify");
  EXPECT_EQ(fine.exit_code, 0) << fine.out;
  EXPECT_THAT(fine.out, HasSubstr("not retained: 119 MB, gitignored"));
  EXPECT_THAT(fine.out, HasSubstr("1 ok, 1 not retained"));
  fs::remove(dir_ / "tiny.onnx");
  auto missing = registry("verify --json");
  EXPECT_EQ(missing.exit_code, 1);
  auto j = nlohmann::json::parse(missing.out);
  EXPECT_EQ(j["ok"], false);
  std::set<std::string> states;
  for (const auto& r : j["releases"]) states.insert(r["state"].get<std::string>());
  EXPECT_EQ(states, (std::set<std::string>{"missing", "not retained"}));
}

TEST_F(RegistryCliTest, BadInputIsExitTwoAndNamesTheProblem) {
  auto no_recipe = registry("add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d");
  EXPECT_EQ(no_recipe.exit_code, 2);
  EXPECT_THAT(no_recipe.err, HasSubstr("needs its recipe"));
  auto missing = registry("add tiny=" + q(dir_ / "none.onnx") + " --version 1 --ort 1.30.0 --device d --made-by x");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.onnx"));
  std::ofstream(dir_ / "blob.bin") << "bytes";
  auto blob = registry("add b=" + q(dir_ / "blob.bin") + " --version 1 --ort 1.30.0 --device d --made-by x");
  EXPECT_EQ(blob.exit_code, 2);
  EXPECT_THAT(blob.err, HasSubstr("--opaque"));
  auto unknown_rung = registry("add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --rung warp --ort 1.30.0 --device d --made-by x");
  EXPECT_EQ(unknown_rung.exit_code, 2);
  EXPECT_THAT(unknown_rung.err, HasSubstr("'warp'"));
  auto no_name = registry("add " + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d --made-by x");
  EXPECT_EQ(no_name.exit_code, 2);
  EXPECT_THAT(no_name.err, HasSubstr("NAME=PATH"));
  auto show = registry("show nothing@9");
  EXPECT_EQ(show.exit_code, 2);
  EXPECT_THAT(show.err, HasSubstr("no release 'nothing@9'"));
  auto bad_url = test::run_command(rung_cli("registry list --registry mysql://db/x"));
  EXPECT_EQ(bad_url.exit_code, 2);
  auto empty = registry("list");
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_THAT(empty.out, HasSubstr("0 releases"));
}

TEST_F(RegistryCliTest, ImportedRecordsMakeTheFleetView) {
  auto bench = test::run_command(rung_cli("bench tiny=" + q(dir_ / "tiny.onnx") + " --rung rung_sim_ep --plugin-dir " + q(plugins_) +
                                          " --ort-dir " + q(test::runtime_dir("1.30.0")) + " --runs 3 --warmup 0 --json " + q(dir_ / "here.json")));
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  // The same model measured on a phone: its record, as that device wrote it.
  auto record = nlohmann::ordered_json::parse(test::read_file(dir_ / "here.json"));
  auto& m = record["measurements"][0];
  m["device"] = "android; soc Qualcomm SM8635";
  m["env"]["hardware_identity"] = m["device"];
  m["env"]["runtime"]["version"] = "1.29.0";
  std::ofstream(dir_ / "phone.json") << record.dump(2);

  auto imported = registry("import " + q(dir_ / "here.json") + " " + q(dir_ / "phone.json"));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_THAT(imported.out, HasSubstr("imported 2 records from 2 devices: 2 measurements new, 0 already there"));
  auto again = registry("import " + q(dir_ / "here.json"));
  EXPECT_THAT(again.out, HasSubstr("0 measurements new, 1 already there"));

  auto fleet = registry("list --by-device");
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  EXPECT_THAT(fleet.out, HasSubstr("tiny (sha256 " + sha256_of_file(dir_ / "tiny.onnx")->substr(0, 12) + ")"));
  EXPECT_THAT(fleet.out, HasSubstr("android; soc Qualcomm SM8635"));
  EXPECT_THAT(fleet.out, HasSubstr("rung_sim_ep"));
  EXPECT_THAT(fleet.out, HasSubstr("ms reference"));
  EXPECT_THAT(fleet.out, HasSubstr("ms match"));
  auto j = nlohmann::json::parse(registry("list --by-device --json").out);
  ASSERT_EQ(j["models"].size(), 1u);
  EXPECT_EQ(j["models"][0]["rungs"], (nlohmann::json{"cpu", "rung_sim_ep"}));
  EXPECT_EQ(j["models"][0]["devices"].size(), 2u);
}

// Real processes at once, on both databases.
using test::Db;

class RegistryConcurrencyTest : public ::testing::TestWithParam<Db> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-registry-writers");
    std::string skip;
    url_ = test::fresh_registry(GetParam(), dir_, skip);
    if (url_.empty()) GTEST_SKIP() << "PostgreSQL cannot start here: " << skip;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `commands` started together in the background; each one's exit code and stderr.
  std::vector<test::CommandResult> at_once(const std::vector<std::string>& commands) {
    std::string script;
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const auto base = dir_ / ("w" + std::to_string(i));
      script += "( " + commands[i] + " >" + q(base.string() + ".out") + " 2>" + q(base.string() + ".err") + "; echo $? >" + q(base.string() + ".rc") + " ) & ";
    }
    script += "wait";
    test::run_command(script);
    std::vector<test::CommandResult> out;
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const auto base = dir_ / ("w" + std::to_string(i));
      const std::string rc = test::read_file(base.string() + ".rc");
      out.push_back({rc.empty() ? -1 : std::stoi(rc), test::read_file(base.string() + ".out"), test::read_file(base.string() + ".err")});
    }
    return out;
  }

  std::string add(const fs::path& artifact, const std::string& version) {
    return rung_cli("registry add tiny=" + q(artifact) + " --version " + version + " --ort 1.30.0 --device 'linux; cpu Test' --made-by export --registry '" +
                    url_ + "'");
  }

  fs::path dir_;
  std::string url_;
};

TEST_P(RegistryConcurrencyTest, WritersAtOnceLoseNothingAndOneKeyHasOneWinner) {
  constexpr int kWriters = 6;
  std::vector<std::string> commands;
  for (int i = 0; i < kWriters; ++i) {
    commands.push_back(add(test::write_elementwise_model(dir_ / ("m" + std::to_string(i) + ".onnx"), {1, 16 + i}), "1." + std::to_string(i)));
  }
  // Two more race for one release key with different bytes.
  const fs::path a = test::write_elementwise_model(dir_ / "race-a.onnx", {1, 100}), b = test::write_elementwise_model(dir_ / "race-b.onnx", {1, 101});
  commands.push_back(add(a, "2.0"));
  commands.push_back(add(b, "2.0"));
  auto results = at_once(commands);
  for (int i = 0; i < kWriters; ++i) EXPECT_EQ(results[i].exit_code, 0) << results[i].err;
  const auto& ra = results[kWriters];
  const auto& rb = results[kWriters + 1];
  EXPECT_EQ((ra.exit_code == 0) + (rb.exit_code == 0), 1) << ra.err << rb.err;
  const auto& loser = ra.exit_code == 0 ? rb : ra;
  EXPECT_EQ(loser.exit_code, 1);
  EXPECT_THAT(loser.err, HasSubstr(*sha256_of_file(a)));
  EXPECT_THAT(loser.err, HasSubstr(*sha256_of_file(b)));

  auto list = test::run_command(rung_cli("registry list --json --registry '" + url_ + "'"));
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto releases = nlohmann::json::parse(list.out)["releases"];
  EXPECT_EQ(releases.size(), static_cast<std::size_t>(kWriters + 1));
}

INSTANTIATE_TEST_SUITE_P(Databases, RegistryConcurrencyTest, ::testing::Values(Db::kSqlite, Db::kPostgresql),
                         [](const auto& info) { return test::db_name(info.param); });

}  // namespace
}  // namespace rung
