// One --json meaning for every command (cli/json_output.h): `--json` puts the
// document, and only it, on stdout (python3 -m json.tool parses the whole of
// it); `--out-json FILE` writes the same document to FILE; `--out-json -` prints
// it; an --out-json that names an input model, or a file in a directory that is
// not there, is exit 2 before any work, the model untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "model_builder.h"
#include "parity_test_support.h"
#include "session/tensor_file.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::q;

struct JsonCommand {
  const char* name;
  std::string (*args)(const fs::path& dir);  // the command on the suite's inputs in `dir`
  const char* input;                         // a file in `dir` the command reads (an --out-json there is refused), or nullptr
};

std::string cpu_vm() { return q(test::fixtures_dir() / "hardware" / "cpu-vm"); }
std::string ort() { return " --ort-dir " + q(test::runtime_dir("1.30.0")); }
std::string registry(const fs::path& d) { return "registry --registry " + q(d / "registry.sqlite") + " "; }

const JsonCommand kCommands[] = {
    {"doctor", [](const fs::path&) { return "doctor --hardware-root " + cpu_vm() + ort(); }, nullptr},
    {"probe", [](const fs::path& d) { return "probe --in-process --model a=" + q(d / "a.onnx") + " --cache-dir " + q(d / "cache") + " --hardware-root " + cpu_vm() + ort(); }, "a.onnx"},
    {"prepare", [](const fs::path& d) { return "prepare --in-process --model a=" + q(d / "a.onnx") + " --cache-dir " + q(d / "cache") + " --hardware-root " + cpu_vm() + ort(); }, "a.onnx"},
    {"parity", [](const fs::path& d) { return "parity --ref " + test::side(d / "a.onnx") + " --cand " + test::side(d / "a.onnx") + " --random 1"; }, "a.onnx"},
    {"quantise", [](const fs::path& d) {
       return "quantise " + q(d / "a.onnx") + " --target npu --calibration " + q(d / "calibration") + " --holdout " + q(d / "holdout") + " --gate " + q(d / "gate.json") +
              " --out " + q(d / "q.onnx") + ort();
     }, "a.onnx"},
    {"registry_add", [](const fs::path& d) {
       return registry(d) + "add a=" + q(d / "a.onnx") + " --version 1.0 --made-by 'a test' --ort 1.30.0 --hardware-root " + cpu_vm();
     }, "a.onnx"},
    {"registry_list", [](const fs::path& d) { return registry(d) + "list"; }, "registry.sqlite"},
    {"registry_list_by_device", [](const fs::path& d) { return registry(d) + "list --by-device"; }, "registry.sqlite"},
    {"registry_show", [](const fs::path& d) { return registry(d) + "show a@1.0"; }, "registry.sqlite"},
    {"registry_verify", [](const fs::path& d) { return registry(d) + "verify"; }, "registry.sqlite"},
    {"registry_import", [](const fs::path& d) { return registry(d) + "import " + q(d / "record.json"); }, "record.json"},
    {"variants_resolve", [](const fs::path&) { return "variants resolve --hardware-root " + cpu_vm() + ort(); }, nullptr},
    {"variants_lint", [](const fs::path&) { return std::string("variants lint"); }, nullptr},
    {"conform", [](const fs::path& d) { return "conform --suite " + q(d / "suite") + " --rung cpu --hardware-root " + cpu_vm() + ort(); }, nullptr},
    {"bench_compare", [](const fs::path& d) { return "bench compare " + q(d / "record.json") + " " + q(d / "record.json"); }, "record.json"},
    {"upgrade", [](const fs::path& d) { return "upgrade " + q(d / "old.onnx") + " --opset 17 --random 1 --out " + q(d / "upgraded.onnx") + ort(); }, "old.onnx"},
};

class JsonOutputCliTest : public ::testing::TestWithParam<JsonCommand> {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-json-output");
    test::ModelBuilder b(17);
    b.input("x", {1, 4}).node("Relu", {"x"}, {"y"}).output("y", {1, 4});
    b.save(dir_ / "a.onnx");
    test::ModelBuilder old(13);  // for upgrade to raise
    old.input("x", {1, 4}).node("Relu", {"x"}, {"y"}).output("y", {1, 4});
    old.save(dir_ / "old.onnx");
    for (const std::string set : {"calibration", "holdout"}) {
      fs::create_directories(dir_ / set);
      for (int i = 0; i < 2; ++i) {
        const float v = set == "calibration" ? 1.0f + static_cast<float>(i) : -1.0f - static_cast<float>(i);
        ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {v, -v, v, -v}), dir_ / set / fmt::format("x{}.pb", i)).ok());
      }
    }
    test::write_text(dir_ / "gate.json", R"({"gates": [{"decoder": "tensor", "atol": 1, "rtol": 1}]})");
    // A conformance suite of one test in ONNX's backend-test layout: Relu on a.onnx.
    const fs::path relu = dir_ / "suite" / "node" / "test_relu";
    fs::create_directories(relu / "test_data_set_0");
    fs::copy_file(dir_ / "a.onnx", relu / "model.onnx");
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {1, -1, 2, -2}), relu / "test_data_set_0" / "input_0.pb").ok());
    ASSERT_TRUE(write_tensor_file(test::float_tensor("y", {1, 4}, {1, 0, 2, 0}), relu / "test_data_set_0" / "output_0.pb").ok());
    // The registry holds one release; a bench record to import (bench's record option, whichever spelling it has).
    auto added = rung(kCommands[5].args(dir_));
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
    const std::string bench = "bench a=" + q(dir_ / "a.onnx") + " --rung cpu --runs 1 --hardware-root " + cpu_vm() + ort();
    auto record = rung(bench + " --out-json " + q(dir_ / "record.json"));
    if (record.exit_code == 2) record = rung(bench + " --json " + q(dir_ / "record.json"));
    ASSERT_TRUE(fs::is_regular_file(dir_ / "record.json")) << record.out << record.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static test::CommandResult rung(const std::string& args) {
    return test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU " + q(test::cli_path()) + " " + args);
  }
  // The command with `extra`; exit 0, or 1 for an answer "no" (a lint finding), never a usage error.
  test::CommandResult ran(const std::string& extra) const {
    auto r = rung(GetParam().args(dir_) + " " + extra);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << GetParam().name << " " << extra << ": exit " << r.exit_code << "\n" << r.out << r.err;
    return r;
  }
  // python3 -m json.tool on the text: the whole of it one JSON document.
  static void expect_only_json(const std::string& text, const std::string& what) {
    const fs::path file = dir_ / "stdout.json";
    test::write_text(file, text);
    auto tool = test::run_command("/usr/bin/python3 -m json.tool " + q(file) + " >/dev/null");
    EXPECT_EQ(tool.exit_code, 0) << what << ": stdout is not one JSON document: " << tool.err << "\n---\n" << text;
  }
  static std::set<std::string> keys_of(const std::string& text) {
    std::set<std::string> keys;
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) keys.insert(k);
    } else if (j.is_array()) {
      keys.insert("[array]");
    }
    return keys;
  }

  static inline fs::path dir_;
};

TEST_P(JsonOutputCliTest, JsonPutsOnlyTheDocumentOnStdout) {
  auto r = ran("--json");
  expect_only_json(r.out, std::string(GetParam().name) + " --json");
  EXPECT_FALSE(keys_of(r.out).empty());
}

// Every document names its schema ("schema": "rung-NAME", "schema_version" where it has one),
// and follows the schema published as schemas/NAME.schema.json.
TEST_P(JsonOutputCliTest, TheDocumentNamesItsPublishedSchemaAndFollowsIt) {
  const fs::path file = dir_ / (std::string(GetParam().name) + ".schema-check.json");
  fs::remove(file);
  ran("--out-json " + q(file));
  ASSERT_TRUE(fs::is_regular_file(file)) << GetParam().name;
  const auto j = nlohmann::json::parse(test::read_file(file));
  ASSERT_TRUE(j.is_object() && j.contains("schema") && j["schema"].is_string()) << GetParam().name << ": no \"schema\" key\n" << j.dump(2).substr(0, 400);
  std::string name = j["schema"].get<std::string>();
  ASSERT_TRUE(name.starts_with("rung-")) << name;
  name = name.substr(5, name.find('/') == std::string::npos ? std::string::npos : name.find('/') - 5);  // "rung-recorded-side/1": recorded-side
  const fs::path schema = test::schema_path(name + ".schema.json");
  ASSERT_TRUE(fs::is_regular_file(schema)) << GetParam().name << " names schema " << j["schema"] << " but " << schema << " is not published";
  EXPECT_EQ(test::schema_errors(schema, file), "") << GetParam().name;
}

TEST_P(JsonOutputCliTest, OutJsonWritesTheSameDocumentAndDashPrintsIt) {
  const fs::path file = dir_ / (std::string(GetParam().name) + ".json");
  fs::remove(file);
  auto written = ran("--out-json " + q(file));
  ASSERT_TRUE(fs::is_regular_file(file)) << written.out << written.err;
  const std::string document = test::read_file(file);
  expect_only_json(document, std::string(GetParam().name) + " --out-json FILE");

  auto both = ran("--json --out-json " + q(file));
  EXPECT_EQ(both.out, test::read_file(file)) << "--json and --out-json FILE carry one document";
  EXPECT_EQ(keys_of(document), keys_of(both.out));

  auto dash = ran("--out-json -");
  expect_only_json(dash.out, std::string(GetParam().name) + " --out-json -");
  EXPECT_EQ(keys_of(dash.out), keys_of(document));
}

// doctor and variants read no file of the suite's (variants' bundled manifest is not one to risk).
TEST_P(JsonOutputCliTest, OutJsonNamingAnInputIsRefusedAndTheInputUntouched) {
  if (GetParam().input == nullptr) GTEST_SKIP() << GetParam().name << " reads no file of this suite's";
  const fs::path input = dir_ / GetParam().input;
  const std::string before = test::read_file(input);
  ASSERT_FALSE(before.empty()) << input;
  auto r = rung(GetParam().args(dir_) + " --out-json " + q(input));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--out-json " + input.string() + " is "));
  EXPECT_EQ(test::read_file(input), before);
  EXPECT_EQ(r.out, "");
}

TEST_P(JsonOutputCliTest, OutJsonInADirectoryThatIsNotThereIsRefusedBeforeWork) {
  const fs::path file = dir_ / "missing" / "dir" / "x.json";
  auto r = rung(GetParam().args(dir_) + " --out-json " + q(file));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--out-json " + file.string()));
  EXPECT_THAT(r.err, HasSubstr("does not exist"));
  EXPECT_EQ(r.out, "") << "it worked before refusing";
}

// The old spelling, --json FILE, is no longer an option's value: a usage error from the parser.
TEST_P(JsonOutputCliTest, JsonTakesNoFile) {
  auto r = rung(GetParam().args(dir_) + " --json " + q(dir_ / "x.json"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.json"));
}

INSTANTIATE_TEST_SUITE_P(EveryCommandWithJson, JsonOutputCliTest, ::testing::ValuesIn(kCommands),
                         [](const ::testing::TestParamInfo<JsonCommand>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace rung
