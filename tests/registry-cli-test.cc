// `rung registry` as a user runs it: real `rung bench` records and `rung
// parity` reports registered as evidence, exit codes, verify's verdicts, the
// fleet view; and concurrent writers (real processes) on both databases.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "model_builder.h"
#include "os/file_hash.h"
#include "parity_test_support.h"
#include "postgres_server.h"
#include "registry/database.h"
#include "rung/registry.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::q;

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
                                          q(test::runtime_dir("1.30.0")) + " --runs 3 --warmup 0 --out-json " + q(dir_ / "tiny.bench.json")));
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  auto sim = test::parity("--ref " + test::side(model) + " --cand " + test::sim_ep_side(model) + " --random 2 --out-json " + q(dir_ / "sim.parity.json"));
  ASSERT_EQ(sim.exit_code, 0) << sim.out << sim.err;
  auto cross = test::parity("--ref " + test::side(model) + " --cand " + test::side(model, "1.28.2") + " --random 1 --out-json " + q(dir_ / "cross.parity.json"));
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
  const auto doc = nlohmann::json::parse(show.out);
  EXPECT_EQ(doc["schema"], "rung-registry-show");
  ASSERT_EQ(doc["releases"].size(), 1u);
  const auto& j = doc["releases"][0];
  EXPECT_EQ(j["evidence"].size(), 2u);
  EXPECT_EQ(j["target"]["rung"], "rung_sim_ep");
  EXPECT_THAT(j["environment"]["providers"]["rung_sim_ep"].get<std::string>(), HasSubstr("sha256:"));
  EXPECT_EQ(j["recipe"]["settings"]["source"], "npm");

  auto verify = registry("verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("1 ok"));
}

// An engine or timing cache is hashed a piece at a time, never read whole: a 512 MiB
// cache enters a release under a 256 MiB data limit, with the hash of its bytes. A
// cache that is not a file, or is not there, is refused naming it.
TEST_F(RegistryCliTest, ACacheLargerThanTheMemoryAllowedIsHashedInPieces) {
  const fs::path cache = dir_ / "engine.cache";
  { std::ofstream(cache) << "x"; }
  fs::resize_file(cache, 512ull << 20);  // sparse: no disk, every byte read all the same
  const auto expected = sha256_of_file(cache);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  auto add = [&](const std::string& version) {
    return "add tiny=" + q(dir_ / "tiny.onnx") + " --version " + version + " --rung cpu --ort 1.30.0 --device 'linux; cpu Test' --made-by export";
  };
  auto r = test::run_command("ulimit -d 262144 && " + rung_cli("registry " + add("1") + " --cache " + q(cache) + " --registry '" + registry_ + "'"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("engine.cache (sha256 " + *expected + ")"));
  for (const fs::path& bad : {dir_ / "absent.cache", dir_}) {
    auto refused = registry(add("2") + " --cache " + q(bad));
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_THAT(refused.err, HasSubstr(bad.string()));
  }
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
  ASSERT_TRUE(Registry::open(registry_));  // show reads an existing registry
  auto show = registry("show nothing@9");
  EXPECT_EQ(show.exit_code, 2);
  EXPECT_THAT(show.err, HasSubstr("no release 'nothing@9'"));
  auto bad_url = test::run_command(rung_cli("registry list --registry mysql://db/x"));
  EXPECT_EQ(bad_url.exit_code, 2);
  auto empty = registry("import " + q(dir_ / "none.json"));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.err, HasSubstr("none.json: does not exist"));
}

// Every document option and import: a FIFO is refused without waiting for a writer, a
// device without reading it, and nothing is created. `timeout` turns a hang into a failure.
TEST_F(RegistryCliTest, DocumentsThatAreNotRegularFilesAreRefusedWithoutWaiting) {
  const fs::path fifo = dir_ / "record.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string add = "add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d ";
  for (const fs::path& bad : {fifo, fs::path("/dev/zero")}) {
    for (const std::string& args : {add + "--recipe " + q(bad), add + "--made-by x --bench " + q(bad), add + "--made-by x --parity " + q(bad),
                                    "import " + q(bad)}) {
      SCOPED_TRACE(args);
      auto r = test::run_command("timeout 20 " + rung_cli("registry " + args + " --registry '" + registry_ + "'"));
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_THAT(r.err, HasSubstr(bad.string() + ": is a " + (bad == fifo ? "FIFO" : "character device")));
      EXPECT_FALSE(fs::exists(dir_ / "registry.sqlite"));
    }
  }
}

TEST_F(RegistryCliTest, ARecipeIsTakenUpToItsLimitAndLargerDocumentsAreRefusedNamingTheFileAndTheLimit) {
  const std::string add = "add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d ";
  // A recipe of exactly the limit (a JSON object, then spaces): added.
  std::string recipe = R"({"command": "rung quantise tiny.onnx"})";
  recipe.resize(kRegistryLimits.recipe_bytes, ' ');
  std::ofstream(dir_ / "at.json") << recipe;
  auto at = registry(add + "--recipe " + q(dir_ / "at.json"));
  EXPECT_EQ(at.exit_code, 0) << at.err;
  // One byte more: refused, and nothing is stored.
  std::ofstream(dir_ / "past.json") << recipe << ' ';
  auto past = registry("add tiny=" + q(dir_ / "tiny.onnx") + " --version 2 --ort 1.30.0 --device d --recipe " + q(dir_ / "past.json"));
  EXPECT_EQ(past.exit_code, 2);
  EXPECT_THAT(past.err, HasSubstr("recipe " + (dir_ / "past.json").string() + ": is 4.0 MiB; rung reads at most 4.0 MiB"));
  // A 200 MB recipe, and a bench record or parity report holding a huge array: refused before a byte is read.
  const fs::path huge = dir_ / "huge.json";
  std::ofstream(huge) << R"({"schema": "rung-bench-record", "schema_version": 2, "padding": [)";
  fs::resize_file(huge, 200u << 20);
  for (const std::string& args : {add + "--recipe " + q(huge), add + "--made-by x --bench " + q(huge), add + "--made-by x --parity " + q(huge),
                                  "import " + q(huge)}) {
    SCOPED_TRACE(args);
    auto r = test::run_command("timeout 60 " + rung_cli("registry " + args + " --registry '" + registry_ + "'"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(huge.string() + ": is 200.0 MiB; rung reads at most"));
  }
  auto list = registry("list --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out)["releases"].size(), 1u);
}

TEST_F(RegistryCliTest, NamesWithControlCharactersOrPastTheirLengthAreRefusedAndStoredTextPrintsEscaped) {
  const std::string add = "add tiny=" + q(dir_ / "tiny.onnx") + " --ort 1.30.0 --device d --made-by x ";
  auto escape = registry(add + "--version \"$(printf '1.0\\033]0;owned\\007')\"");
  EXPECT_EQ(escape.exit_code, 2);
  EXPECT_THAT(escape.err, HasSubstr("the version (--version) holds a control character (\\x1b at byte 3)"));
  EXPECT_THAT(escape.err, Not(HasSubstr("\x1b")));
  auto newline = test::run_command(rung_cli("registry add \"$(printf 'ti\\nny')\"=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d --made-by x"
                                                                                                  " --registry '" + registry_ + "'"));
  EXPECT_EQ(newline.exit_code, 2);
  EXPECT_THAT(newline.err, HasSubstr("the model name (NAME=PATH) holds a control character (\\n at byte 2)"));
  auto longest = registry(add + "--version " + std::string(kRegistryLimits.name_bytes, 'v'));
  EXPECT_EQ(longest.exit_code, 0) << longest.err;
  auto longer = registry(add + "--version " + std::string(kRegistryLimits.name_bytes + 1, 'v'));
  EXPECT_EQ(longer.exit_code, 2);
  EXPECT_THAT(longer.err, HasSubstr("the version (--version) is 129 bytes; the registry stores at most 128"));
  auto reason = registry(add + "--version 2 --not-retained " + std::string(kRegistryLimits.text_bytes + 1, 'r'));
  EXPECT_EQ(reason.exit_code, 2);
  EXPECT_THAT(reason.err, HasSubstr("--not-retained"));

  // What another tool (or an older rung) wrote into the database prints escaped, and a listing's cells are bounded.
  {
    auto db = registry::open_database(registry_);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE((*db)->query("UPDATE releases SET model = ?, device = ?, not_retained_reason = ?, retained = 0",
                             {std::string("tiny\x1b[2J\x1b]0;owned\x07") + std::string(4000, 'x'), std::string("cpu\r\nrelease 9: forged"),
                              std::string("gone\x1b[31m")}));
  }
  for (const std::string command : {"list", "show 1", "verify", "list --json", "show 1 --json"}) {
    SCOPED_TRACE(command);
    auto r = registry(command);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, Not(HasSubstr("\x1b"))) << r.out.substr(0, 400);
    EXPECT_THAT(r.out, Not(HasSubstr("\x07")));
    EXPECT_THAT(r.out, Not(HasSubstr("\nrelease 9")));
  }
  auto list = registry("list");
  EXPECT_THAT(list.out, HasSubstr("tiny\\x1b[2J\\x1b]0;owned\\x07"));
  EXPECT_LT(list.out.size(), 1000u);
  auto show = registry("show 1");
  EXPECT_THAT(show.out, HasSubstr("cpu\\r\\nrelease 9: forged"));
  EXPECT_THAT(show.out, HasSubstr("not retained: gone\\x1b[31m"));
  auto fleet_record = dir_ / "escape.json";
  {
    auto db = registry::open_database(registry_);
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->query("INSERT INTO measurements (digest, model_name, model_sha256, device, hostname, runtime_version, measured_at, rung, model_id, ok, "
                             "p50_ms, output_match) VALUES ('d1', ?, 'abc', ?, 'h', '1.30.0', 'then', 'cpu', 'm', 1, 1.0, 'reference')",
                             {std::string("m\x1b[1m"), std::string("phone\x1b[8m")}));
    ASSERT_TRUE((*db)->query("INSERT INTO fleet (model_name, model_sha256, device, runtime_version, rung, measurements, measured_at, latest_id) "
                             "SELECT model_name, model_sha256, device, runtime_version, rung, 1, measured_at, id FROM measurements"));
  }
  auto by_device = registry("list --by-device");
  EXPECT_EQ(by_device.exit_code, 0) << by_device.err;
  EXPECT_THAT(by_device.out, HasSubstr("phone\\x1b[8m"));
  EXPECT_THAT(by_device.out, Not(HasSubstr("\x1b")));
}

// A row another tool damaged, or filled past what rung writes, costs that release alone: list, show and verify
// go through every other release, mark the damaged one with why, and exit 1. A column too long is never read.
TEST_F(RegistryCliTest, ADamagedRowIsMarkedAndTheRestOfTheRegistryStillReads) {
  for (const std::string version : {"1", "2", "3", "4"}) {
    auto added = registry("add tiny=" + q(dir_ / "tiny.onnx") + " --version " + version + " --ort 1.30.0 --device d --made-by x");
    ASSERT_EQ(added.exit_code, 0) << added.err;
  }
  {
    auto db = registry::open_database(registry_);
    ASSERT_TRUE(db) << db.error().message;
    // 2: precision counts that are not JSON. 3: a recipe past the read bound, by one. 4: evidence past its own.
    ASSERT_TRUE((*db)->query("UPDATE releases SET precision_kind = 'initializers', precision_detail = '{not json' WHERE version = '2'"));
    ASSERT_TRUE((*db)->query("UPDATE releases SET recipe = ? WHERE version = '3'", {std::string(kRegistryLimits.recipe_bytes + 1, 'r')}));
    ASSERT_TRUE((*db)->query("INSERT INTO evidence (release_id, kind, sha256, summary, document, added_at) SELECT id, 'bench', 'abc', 's', ?, 'then' FROM releases WHERE version = '4'",
                             {std::string(kRegistryLimits.bench_record_bytes + 1, 'd')}));
  }
  auto list = registry("list");
  EXPECT_EQ(list.exit_code, 1) << list.out << list.err;
  EXPECT_THAT(list.out, HasSubstr("4 releases"));
  EXPECT_THAT(list.out, ::testing::ContainsRegex("\n +2 +tiny +2 .*DAMAGED"));
  EXPECT_THAT(list.out, ::testing::ContainsRegex("\n +1 +tiny +1 .*retained"));
  // A listing reads neither recipes nor documents: the long ones cost nothing there.
  EXPECT_THAT(list.out, ::testing::ContainsRegex("\n +3 +tiny +3 .*retained"));
  EXPECT_THAT(list.err, HasSubstr("release 2 cannot be read whole"));
  auto json_list = registry("list --json");
  EXPECT_EQ(json_list.exit_code, 1);
  const auto listed = nlohmann::json::parse(json_list.out)["releases"];
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_TRUE(listed[0]["damaged"].is_null());
  EXPECT_THAT(listed[1]["damaged"].get<std::string>(), HasSubstr("precision counts are not a JSON object"));

  for (const std::string which : {"1", "tiny@1"}) {
    auto fine = registry("show " + which);
    EXPECT_EQ(fine.exit_code, 0) << which << fine.out << fine.err;
    EXPECT_THAT(fine.out, Not(HasSubstr("DAMAGED")));
  }
  auto show = registry("show tiny");
  EXPECT_EQ(show.exit_code, 1) << show.err;
  EXPECT_THAT(show.out, HasSubstr("release 1: tiny 1"));
  EXPECT_THAT(show.out, HasSubstr("DAMAGED      precision counts are not a JSON object"));
  EXPECT_THAT(show.out, HasSubstr(fmt::format("DAMAGED      not read, too long: recipe (over {} characters)", kRegistryLimits.recipe_bytes)));
  EXPECT_THAT(show.out, HasSubstr("DAMAGED      evidence 1 not read"));
  EXPECT_THAT(show.err, HasSubstr("releases 2, 3, 4 cannot be read whole"));
  EXPECT_EQ(show.out.find(std::string(1000, 'r')), std::string::npos) << "the long recipe was read";
  EXPECT_EQ(show.out.find(std::string(1000, 'd')), std::string::npos) << "the long document was read";

  auto verify = registry("verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.out;
  EXPECT_THAT(verify.out, HasSubstr("3 ok, 1 damaged"));
  EXPECT_THAT(verify.out, HasSubstr("damaged: precision counts are not a JSON object"));
}

TEST_F(RegistryCliTest, AReadOnlyCommandOnARegistryThatIsNotThereIsExitTwoAndCreatesNothing) {
  const fs::path typo = dir_ / "typo" / "x.sqlite";
  for (const std::string command : {"list", "list --by-device", "show tiny", "verify", "list --json"}) {
    SCOPED_TRACE(command);
    auto r = test::run_command(rung_cli("registry " + command + " --registry " + q(typo)));
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(typo.string() + ": does not exist"));
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(dir_ / "typo"));
  }
  std::string skip;
  const std::string empty = test::fresh_postgres_database(skip);
  if (empty.empty()) GTEST_SKIP() << "PostgreSQL cannot start here: " << skip;
  auto pg = test::run_command(rung_cli("registry list --registry '" + empty + "'"));
  EXPECT_EQ(pg.exit_code, 2);
  EXPECT_THAT(pg.err, HasSubstr("holds no registry"));
  auto still = test::run_command(rung_cli("registry verify --registry '" + empty + "'"));
  EXPECT_THAT(still.err, HasSubstr("holds no registry"));  // the first created nothing
}

TEST_F(RegistryCliTest, NoFormOfPasswordIsPrintedInErrorsOrOutput) {
  const std::string none = (dir_ / "no-server").string();
  // Each form against a server that is not there: the error names the registry, with the secret masked.
  const std::vector<std::pair<std::string, std::vector<std::string>>> forms{
      {"postgresql://ana:Secret1@/rung?host=" + none, {"Secret1"}},
      {"postgresql:///rung?host=" + none + "&password=Secret2", {"Secret2"}},
      {"postgresql:///rung?password=Secret3&host=" + none, {"Secret3"}},
      {"postgresql:///rung?host=" + none + "&pass%77ord=Secret4", {"Secret4"}},
      {"postgresql:///rung?host=" + none + "&password=Secr%65t5", {"Secr%65t5", "Secret5"}},
      {"postgresql:///rung?host=" + none + "&sslpassword=Secret6", {"Secret6"}},
      {"postgresql:///rung?host=" + none + "&password=Secret7%zz", {"Secret7"}},
      {"mysql://ana:Secret8@db/rung", {"Secret8"}},
      {"host=db password=Secret9 dbname=rung", {"Secret9"}}};
  std::ofstream(dir_ / "r.json") << "{}";
  for (const auto& [url, secrets] : forms) {
    for (const std::string& command : std::vector<std::string>{"list", "verify", "show 1", "import " + q(dir_ / "r.json"), "list --by-device"}) {
      SCOPED_TRACE(url + " " + command);
      auto r = test::run_command("cd " + q(dir_) + " && timeout 60 " + rung_cli("registry " + command + " --registry '" + url + "'"));
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_THAT(r.err, HasSubstr("***"));
      for (const auto& secret : secrets) EXPECT_THAT(r.out + r.err, Not(HasSubstr(secret)));
    }
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3);  // tiny.onnx, plugins, r.json: no file named by a connection string
  // A registry that works: its URL is in every line of normal output, masked.
  std::string skip;
  const std::string url = test::fresh_postgres_database(skip);
  if (url.empty()) GTEST_SKIP() << "PostgreSQL cannot start here: " << skip;
  const std::string with_password = url + "&password=Secret10";
  const std::string add = "registry add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d --made-by x --registry '" + with_password + "'";
  auto added = test::run_command(rung_cli(add));
  ASSERT_EQ(added.exit_code, 0) << added.err;
  for (const std::string command : {"list", "list --json", "verify", "list --by-device", "show 9"}) {
    SCOPED_TRACE(command);
    auto r = test::run_command(rung_cli("registry " + command + " --registry '" + with_password + "'"));
    EXPECT_THAT(r.out + r.err, HasSubstr("password=***"));
    EXPECT_THAT(r.out + r.err, Not(HasSubstr("Secret10")));
  }
  EXPECT_THAT(added.out, HasSubstr("password=***"));
  EXPECT_THAT(added.out, Not(HasSubstr("Secret10")));
}

// libpq is loaded when a postgresql:// registry is opened, not linked: a machine
// whose libpq cannot be loaded is told so, and SQLite registries never need it.
TEST_F(RegistryCliTest, APostgresqlRegistryWithoutAUsableLibpqSaysWhyAndSqliteNeverNeedsIt) {
  const fs::path not_elf = dir_ / "not-elf", no_symbols = dir_ / "no-symbols";
  fs::create_directories(not_elf);
  fs::create_directories(no_symbols);
  std::ofstream(not_elf / "libpq.so.5") << "not a shared library";
  fs::copy_file(plugins_ / "librung_sim_ep.so", no_symbols / "libpq.so.5");  // a real library, but no PQ functions
  const std::string url = "postgresql:///rung?host=" + (dir_ / "no-server").string();
  int version = 0;
  for (const auto& [dir, why] : std::vector<std::pair<fs::path, std::string>>{{not_elf, "libpq.so.5 cannot be loaded"},
                                                                                {no_symbols, "has no PQconnectdbParams"}}) {
    SCOPED_TRACE(dir.string());
    const std::string env = "LD_LIBRARY_PATH=" + q(dir) + " ";
    auto r = test::run_command(env + rung_cli("registry list --registry '" + url + "'"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("PostgreSQL's client library"));
    EXPECT_THAT(r.err, HasSubstr(why));
    EXPECT_THAT(r.err, HasSubstr("postgresql:///rung"));
    // The same machine's SQLite registry: libpq is never looked for.
    auto added = test::run_command(env + rung_cli("registry add tiny=" + q(dir_ / "tiny.onnx") +
                                                  " --version " + std::to_string(++version) +
                                                  " --ort 1.30.0 --device d --made-by x --registry '" + registry_ + "'"));
    EXPECT_EQ(added.exit_code, 0) << added.err;
  }
}

// A server that accepts connections and never says a word.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 64) != 0) return;
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) held_.push_back(c);  // kept open, never written to
      }
    });
  }
  ~SilentServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;
  std::thread thread_;
};

TEST_F(RegistryCliTest, EveryCommandGivesUpOnAServerThatNeverAnswers) {
  SilentServer server;
  ASSERT_NE(server.port(), 0);
  const std::string url = "postgresql://rung@127.0.0.1:" + std::to_string(server.port()) + "/rung";
  const std::vector<std::string> commands{"list", "list --by-device", "show tiny", "verify", "import " + q(dir_ / "r.json"),
                                          "add tiny=" + q(dir_ / "tiny.onnx") + " --version 1 --ort 1.30.0 --device d --made-by x"};
  std::ofstream(dir_ / "r.json") << "{}";  // read, then never parsed: the connection comes first
  // All at once, each under `timeout` so that a hang fails the test instead of blocking it.
  std::string script;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto base = (dir_ / ("c" + std::to_string(i))).string();
    script += "( timeout 60 " + rung_cli("registry " + commands[i] + " --registry '" + url + "'") + " >" + q(base + ".out") + " 2>" + q(base + ".err") +
              "; echo $? >" + q(base + ".rc") + " ) & ";
  }
  test::run_command(script + "wait");
  for (std::size_t i = 0; i < commands.size(); ++i) {
    SCOPED_TRACE(commands[i]);
    const auto base = (dir_ / ("c" + std::to_string(i))).string();
    const std::string err = test::read_file(base + ".err");
    EXPECT_EQ(test::read_file(base + ".rc"), "2\n") << err;
    EXPECT_THAT(err, HasSubstr("cannot connect to the registry " + url));
    EXPECT_THAT(err, HasSubstr("timeout expired"));
    EXPECT_THAT(err, HasSubstr("connect_timeout"));
  }
}

TEST_F(RegistryCliTest, ImportedRecordsMakeTheFleetView) {
  auto bench = test::run_command(rung_cli("bench tiny=" + q(dir_ / "tiny.onnx") + " --rung rung_sim_ep --plugin-dir " + q(plugins_) +
                                          " --ort-dir " + q(test::runtime_dir("1.30.0")) + " --runs 3 --warmup 0 --out-json " + q(dir_ / "here.json")));
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
                         [](const auto& param_info) { return test::db_name(param_info.param); });

}  // namespace
}  // namespace rung
