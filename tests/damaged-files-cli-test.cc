// Every file rung reads, damaged as a disk, an editor or another user damages
// it, one file and one damage at a time: nesting deep enough to overflow a
// recursive reader, fields of the wrong kind, values that parse but make no
// sense, a directory or a FIFO in the file's place. The answer is never a
// crash: a cache file is ignored with one line naming it and rewritten; a file
// the user gave is an input error (exit 2) naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

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

// Nesting far beyond any stack a recursive reader has.
std::string deep_object(std::size_t levels) {
  std::string s;
  for (std::size_t i = 0; i < levels; ++i) s += "{\"a\":";
  s += "1";
  s += std::string(levels, '}');
  return s;
}
std::string deep_array(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }
constexpr std::size_t kDeep = 50'000;

std::size_t lines_naming(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos;
  return n;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::trunc) << text; }

class DamagedFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-damaged");
    test::make_plugin_dir(dir_);
    test::write_elementwise_model(dir_ / "tiny.onnx", {1, 8, 16});
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path cache() const { return dir_ / "cache"; }
  std::string common(const std::string& command) const {
    return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_SIM_EP_ABORT_AT '" + test::cli_path().string() + "' " + command +
           " --model tiny=" + (dir_ / "tiny.onnx").string() + " --cache-dir " + cache().string() + " --ort-dir " +
           test::runtime_dir("1.30.0").string() + " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() +
           " --plugin-dir " + (dir_ / "plugins").string() + " --accept-ratio 1000";
  }
  test::CommandResult probe(const std::string& extra = "") { return test::run_command(common("probe") + " " + extra); }
  test::CommandResult prepare() { return test::run_command(common("prepare") + " --json"); }

  // A valid cache, as a first probe leaves it.
  nlohmann::json first_probe() {
    auto r = probe();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(test::read_file(cache() / "probe.json"));
  }

  fs::path dir_;
};

// ---- the probe cache (probe.json) ----

struct CacheDamage {
  const char* name;
  std::function<void(nlohmann::json&)> damage;  // edits a valid cache; empty: the text below replaces it
  std::string text;
  const char* said;  // what the one log line says
};

class ProbeCacheDamageTest : public DamagedFilesTest, public ::testing::WithParamInterface<CacheDamage> {
 protected:
  // A probe writes a valid cache; the parameter's damage is then put into it.
  const CacheDamage& damage_the_cache() {
    auto valid = first_probe();
    const CacheDamage& d = GetParam();
    if (d.damage) {
      d.damage(valid);
      write(cache() / "probe.json", valid.dump());
    } else {
      write(cache() / "probe.json", d.text);
    }
    return d;
  }
};

TEST_P(ProbeCacheDamageTest, IsIgnoredWithOneLineNamingItThenRewritten) {
  const CacheDamage& d = damage_the_cache();
  auto r = probe();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_naming(r.err, (cache() / "probe.json").string()), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr(d.said));
  EXPECT_THAT(r.out, HasSubstr("rung_sim_ep"));
  // Rewritten: the next launch trusts it and says nothing.
  auto again = probe();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(lines_naming(again.err, "probe.json"), 0u) << again.err;
  EXPECT_THAT(again.out, HasSubstr("from the cache"));
}

TEST_P(ProbeCacheDamageTest, TheEngineStartsOnIt) {
  damage_the_cache();
  auto r = prepare();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rung"], "rung_sim_ep");
}

INSTANTIATE_TEST_SUITE_P(
    Damages, ProbeCacheDamageTest,
    ::testing::Values(
        CacheDamage{"DeepObject", nullptr, deep_object(kDeep), "nested deeper than 64 levels"},
        CacheDamage{"DeepArray", nullptr, deep_array(kDeep), "nested deeper than 64 levels"},
        CacheDamage{"DeepInsideTheOutcome", [](nlohmann::json& j) { j["outcome"]["log"] = nlohmann::json::parse(deep_array(100)); },
                    "", "nested deeper than 64 levels"},
        CacheDamage{"ChosenIsANumber", [](nlohmann::json& j) { j["outcome"]["chosen"] = 5; }, "", "'chosen' must be a string"},
        CacheDamage{"RungIsAnObject", [](nlohmann::json& j) { j["outcome"]["rungs"][0]["rung"] = nlohmann::json::object(); }, "",
                    "'rung' must be a string"},
        CacheDamage{"ChosenNotOnTheLadder", [](nlohmann::json& j) { j["outcome"]["chosen"] = "warp-drive"; }, "",
                    "its chosen rung 'warp-drive' is not on this ladder"},
        CacheDamage{"ChosenWasNotTaken",
                    [](nlohmann::json& j) {
                      j["outcome"]["chosen"] = "cuda";
                    },
                    "", "its chosen rung 'cuda' has the verdict 'failed'"},
        CacheDamage{"NullModelList", [](nlohmann::json& j) { j["outcome"]["floor"]["models"] = nullptr; }, "", "'models' must be a list"},
        CacheDamage{"ThreeHundredThousandRungs",
                    [](nlohmann::json& j) {
                      // Small entries, so the count (not the file's size) is what refuses it.
                      j["outcome"]["rungs"] = nlohmann::json::array();
                      for (int i = 0; i < 300'000; ++i) j["outcome"]["rungs"].push_back(0);
                    },
                    "", "'rungs' holds 300000 entries"},
        CacheDamage{"NegativeTime", [](nlohmann::json& j) { j["outcome"]["floor"]["models"][0]["median_ms"] = -1; }, "",
                    "'median_ms' is negative"},
        CacheDamage{"HugeCount", [](nlohmann::json& j) { j["outcome"]["runtime"]["builds_found"] = 1e300; }, "",
                    "'builds_found' must be a whole number"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(DamagedFilesTest, ACacheFileThatIsADirectoryIsSaidToBeOne) {
  first_probe();
  fs::remove(cache() / "probe.json");
  fs::create_directory(cache() / "probe.json");
  auto r = probe();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr((cache() / "probe.json").string() + ": is a directory, not a file"));
  EXPECT_THAT(r.err, Not(HasSubstr("JSON")));
}

TEST_F(DamagedFilesTest, ACacheFileThatIsAFifoIsSaidToBeOneAndNothingWaitsOnIt) {
  first_probe();
  fs::remove(cache() / "probe.json");
  ASSERT_EQ(::mkfifo((cache() / "probe.json").c_str(), 0600), 0);
  auto r = probe();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr((cache() / "probe.json").string() + ": is a FIFO, not a file"));
}

// ---- the model-hash cache (model-hashes.json) ----

class HashCacheDamageTest : public DamagedFilesTest, public ::testing::WithParamInterface<std::pair<const char*, const char*>> {};

TEST_P(HashCacheDamageTest, IsIgnoredWithOneLineRewrittenAndTheEngineStarts) {
  first_probe();
  const fs::path hashes = cache() / "model-hashes.json";
  const auto valid = nlohmann::json::parse(test::read_file(hashes));
  const std::string key = valid.begin().key();
  const std::string damage = GetParam().first;
  auto edited = valid;
  if (damage == "size-is-text") edited[key]["size"] = "large";
  if (damage == "sha-is-object") edited[key]["sha256"] = nlohmann::json::object();
  if (damage == "inode-is-negative") edited[key]["inode"] = -3;
  const std::string damaged = damage == "deep" ? deep_object(kDeep) : edited.dump();
  write(hashes, damaged);
  auto r = probe();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_naming(r.err, hashes.string()), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().second));
  EXPECT_THAT(r.out, HasSubstr("from the cache"));  // the model did not change, so neither did the fingerprint
  EXPECT_EQ(nlohmann::json::parse(test::read_file(hashes)), valid) << "rewritten as it was";
  // The engine starts on the damaged file too.
  write(hashes, damaged);
  auto p = prepare();
  ASSERT_EQ(p.exit_code, 0) << p.err;
}

INSTANTIATE_TEST_SUITE_P(Damages, HashCacheDamageTest,
                         ::testing::Values(std::make_pair("deep", "nested deeper than 64 levels"),
                                           std::make_pair("size-is-text", "'size' must be a whole number"),
                                           std::make_pair("sha-is-object", "'sha256' must be a string"),
                                           std::make_pair("inode-is-negative", "'inode' must be a whole number")));

// ---- the in-process probe's strike and attempt files ----

class LedgerDamageTest : public DamagedFilesTest, public ::testing::WithParamInterface<std::pair<const char*, std::string>> {};

TEST_P(LedgerDamageTest, IsIgnoredWithOneLineAndTheProbeGoesOn) {
  auto r0 = probe("--in-process");
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  const fs::path file = cache() / GetParam().first;
  write(file, GetParam().second);
  auto r = probe("--in-process --force");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_naming(r.err, file.string()), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("ignored " + file.string()));
  auto again = probe("--in-process --force");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(lines_naming(again.err, file.string()), 0u) << again.err;
}

INSTANTIATE_TEST_SUITE_P(
    Damages, LedgerDamageTest,
    ::testing::Values(std::make_pair("strikes.json", deep_object(kDeep)), std::make_pair("strikes.json", deep_array(kDeep)),
                      std::make_pair("strikes.json", R"({"fingerprint": "x", "strikes": {"rung_sim_ep": "two"}})"),
                      std::make_pair("strikes.json", R"({"fingerprint": "x", "strikes": {"rung_sim_ep": 1e300}})"),
                      std::make_pair("strikes.json", R"({"fingerprint": 7, "strikes": {}})"),
                      std::make_pair("attempt", deep_object(kDeep)), std::make_pair("attempt", R"({"rung": 5, "model": "m", "fingerprint": "x"})"),
                      std::make_pair("attempt", R"(["rung_sim_ep"])")));

// ---- files the user gives: an input error (exit 2) naming the file ----

TEST_F(DamagedFilesTest, DeepInputSpecIsAnInputErrorNamingTheFile) {
  write(dir_ / "spec.json", deep_object(kDeep));
  auto r = probe("--input-spec tiny=" + (dir_ / "spec.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr((dir_ / "spec.json").string() + ": nested deeper than 64 levels"));
}

TEST_F(DamagedFilesTest, DeepGateAndPreprocessingFilesAreInputErrorsNamingTheFile) {
  for (const char* option : {"--gate", "--preprocess"}) {
    write(dir_ / "g.json", deep_array(kDeep));
    auto r = test::run_command("env -u RUNG_ORT_DIR '" + test::cli_path().string() + "' parity --ref " + (dir_ / "tiny.onnx").string() +
                               " --cand " + (dir_ / "tiny.onnx").string() + " --random 1 " + option + " " + (dir_ / "g.json").string() +
                               " --ort-dir " + test::runtime_dir("1.30.0").string());
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr((dir_ / "g.json").string() + ": nested deeper than 64 levels")) << option;
  }
}

TEST_F(DamagedFilesTest, DeepOrDamagedBenchRecordIsRefusedBeforeAnythingIsMeasured) {
  for (const std::string& text : {deep_object(kDeep), std::string(R"({"schema": 5, "schema_version": "one"})"),
                                  std::string(R"({"schema": "rung-bench-record", "schema_version": 1, "model": {"sha256": 12}, "measurements": []})")}) {
    write(dir_ / "record.json", text);
    auto r = test::run_command("env -u RUNG_ORT_DIR '" + test::cli_path().string() + "' bench tiny=" + (dir_ / "tiny.onnx").string() +
                               " --rung cpu --runs 1 --json " + (dir_ / "record.json").string() + " --ort-dir " +
                               test::runtime_dir("1.30.0").string() + " --hardware-root " +
                               (test::fixtures_dir() / "hardware" / "cpu-vm").string());
    EXPECT_EQ(r.exit_code, 2) << text.substr(0, 60) << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr((dir_ / "record.json").string()));
    EXPECT_THAT(r.out, Not(HasSubstr("CPU (floor)"))) << "measured before refusing";
    EXPECT_EQ(test::read_file(dir_ / "record.json"), text) << "the refused record was changed";
  }
}

}  // namespace
}  // namespace rung
