// One text policy. Every JSON document rung writes goes through one writer
// (rung/json_text.h) that never throws on bytes that are not UTF-8: each such
// byte becomes U+FFFD, and a path keeps its bytes in a form of its own. Every
// command meets a valid model, image or test folder whose name is not UTF-8 and
// does its work: no abort, no "internal error".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "model_builder.h"
#include "os/json_form.h"
#include "session/tensor_file.h"
#include "rung/json_text.h"
#include "rung/printable.h"
#include "parity_test_support.h"

namespace rung {

// A job-like form with a path in each kind of place a form can hold one.
struct PathsForm {
  std::filesystem::path model;
  std::vector<std::filesystem::path> inputs;
  std::optional<std::filesystem::path> cache;
  std::map<std::string, std::filesystem::path> by_name;
  std::string note;
};
RUNG_JSON_FORM(PathsForm, model, inputs, cache, by_name, note)

namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using test::q;

const std::string kReplacement = "\xef\xbf\xbd";  // U+FFFD in UTF-8

TEST(JsonTextTest, EachByteThatIsNotUtf8BecomesOneReplacementAndTheRestIsKept) {
  struct Case {
    const char* what;
    std::string in, out;
  };
  const std::vector<Case> cases = {
      {"a Latin-1 byte", "caf\xe9.onnx", "caf" + kReplacement + ".onnx"},
      {"0xff", "ok\xffname", "ok" + kReplacement + "name"},
      {"a lone continuation byte", "a\x80z", "a" + kReplacement + "z"},
      {"an overlong NUL", std::string("a\xc0\x80z"), "a" + kReplacement + kReplacement + "z"},
      {"a surrogate", "a\xed\xa0\x80z", "a" + kReplacement + kReplacement + kReplacement + "z"},
      {"past U+10FFFF", "a\xf4\x90\x80\x80z", "a" + kReplacement + kReplacement + kReplacement + kReplacement + "z"},
      {"a sequence cut at the end", "ab\xe2\x82", "ab" + kReplacement},
      {"valid UTF-8 of every length", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},
  };
  for (const auto& c : cases) {
    std::string text;
    ASSERT_NO_THROW(text = json_text(nlohmann::json{{"name", c.in}})) << c.what;
    // What was written is JSON again, and holds the stated replacement.
    const auto back = nlohmann::json::parse(text);
    EXPECT_EQ(back.at("name").get<std::string>(), c.out) << c.what;
  }
  // A key is text too.
  const auto keyed = nlohmann::json::parse(json_text(nlohmann::json{{"k\xff", 1}}));
  EXPECT_TRUE(keyed.contains("k" + kReplacement)) << keyed;
}

TEST(JsonTextTest, AnOrderedDocumentFollowsTheSameRuleAndKeepsItsOrder) {
  nlohmann::ordered_json j;
  j["z"] = "ok\xffname";
  j["a"] = 1;
  std::string text;
  ASSERT_NO_THROW(text = json_text(j));
  EXPECT_EQ(text, "{\"z\":\"ok" + kReplacement + "name\",\"a\":1}");
}

TEST(JsonTextTest, AnIndentBelowZeroIsCompactAndNIsNSpacesALevel) {
  const nlohmann::json j = {{"a", {1}}};
  EXPECT_EQ(json_text(j), "{\"a\":[1]}");
  EXPECT_EQ(json_text(j, -1), "{\"a\":[1]}");
  EXPECT_EQ(json_text(j, -7), "{\"a\":[1]}");
  EXPECT_EQ(json_text(j, 0), "{\n\"a\": [\n1\n]\n}");
  EXPECT_EQ(json_text(j, 2), "{\n  \"a\": [\n    1\n  ]\n}");
}

TEST(JsonTextTest, APathThatIsNotUtf8TravelsAsItsBytesAndComesBackTheSame) {
  const fs::path utf8 = "/models/caf\xc3\xa9/m.onnx";
  EXPECT_EQ(path_json(utf8), nlohmann::json(utf8.string()));
  EXPECT_EQ(path_from_json(path_json(utf8)), utf8);
  for (const fs::path& p : {fs::path("/models/caf\xe9/m.onnx"), fs::path("ok\xffname.onnx"), fs::path("\x80")}) {
    const auto j = path_json(p);
    ASSERT_TRUE(j.is_object()) << j;
    // Every byte as two lower-case hex digits: "\xff" is "ff".
    EXPECT_EQ(j.at("path_bytes").get<std::string>().size(), 2 * p.string().size()) << j;
    const auto back = path_from_json(nlohmann::json::parse(json_text(j)));
    ASSERT_TRUE(back.has_value()) << j;
    EXPECT_EQ(back->string(), p.string());
  }
  EXPECT_EQ(path_json(fs::path("a\xff")).at("path_bytes"), "61ff");
  // Anything else is no path: each malformed form alone.
  for (const char* bad : {R"({"path_bytes": "6"})", R"({"path_bytes": "6g"})", R"({"path_bytes": "6G"})", R"({"path_bytes": 61})",
                          R"({"path_bytes": "61", "x": 1})", R"({"bytes": "61"})", "61", "null", "[\"a\"]", "{}"}) {
    EXPECT_FALSE(path_from_json(nlohmann::json::parse(bad)).has_value()) << bad;
  }
  EXPECT_EQ(path_from_json(nlohmann::json::parse(R"({"path_bytes": ""})")), fs::path());
  EXPECT_EQ(path_from_json(nlohmann::json::parse(R"({"path_bytes": "4142"})")), fs::path("AB"));
}

TEST(JsonTextTest, APathFieldAnywhereInAFormKeepsItsBytesThroughAJobFile) {
  PathsForm f;
  f.model = "/m/caf\xe9/ok\xffname.onnx";
  f.inputs = {"/in/\xfe", "/in/plain"};
  f.cache = fs::path("/c/\xe9");
  f.by_name = {{"x", "/x/\xff"}};
  f.note = "a note \xff";
  nlohmann::json j = f;
  std::string text;
  ASSERT_NO_THROW(text = json_text(j, 2));
  PathsForm back;
  read_json(nlohmann::json::parse(text), back);
  EXPECT_EQ(back.model.string(), f.model.string());
  ASSERT_EQ(back.inputs.size(), 2u);
  EXPECT_EQ(back.inputs[0].string(), "/in/\xfe");
  EXPECT_EQ(back.inputs[1].string(), "/in/plain");
  ASSERT_TRUE(back.cache.has_value());
  EXPECT_EQ(back.cache->string(), "/c/\xe9");
  EXPECT_EQ(back.by_name.at("x").string(), "/x/\xff");
  // Text that is not a path follows the writer's rule.
  EXPECT_EQ(back.note, "a note " + kReplacement);
  // An absent optional path is null, and comes back absent.
  f.cache.reset();
  j = f;
  EXPECT_TRUE(j.at("cache").is_null());
  read_json(nlohmann::json::parse(json_text(j)), back);
  EXPECT_FALSE(back.cache.has_value());
}

// The commands, each given a valid model (or image, or test folder) whose
// folder and file names are not UTF-8.
struct NamedCommand {
  const char* name;
  // The arguments after `rung`, with `m` the model, `d` a scratch folder whose name is not UTF-8.
  std::string (*args)(const fs::path& m, const fs::path& d);
  bool json;  // stdout is one JSON document
};

std::string ort() { return " --ort-dir " + q(test::runtime_dir("1.30.0")); }
std::string cpu_vm() { return " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm"); }

const NamedCommand kCommands[] = {
    {"probe", [](const fs::path& m, const fs::path& d) { return "probe --model tiny=" + q(m) + " --runs 2 --cache-dir " + q(d / "cache") + cpu_vm() + ort(); }, false},
    {"probe_json", [](const fs::path& m, const fs::path& d) { return "probe --json --model tiny=" + q(m) + " --runs 2 --cache-dir " + q(d / "cache") + cpu_vm() + ort(); }, true},
    {"probe_in_process", [](const fs::path& m, const fs::path& d) { return "probe --in-process --model tiny=" + q(m) + " --runs 2 --cache-dir " + q(d / "cache") + cpu_vm() + ort(); }, false},
    {"prepare", [](const fs::path& m, const fs::path& d) { return "prepare --model tiny=" + q(m) + " --cache-dir " + q(d / "cache") + cpu_vm() + ort(); }, false},
    {"bench", [](const fs::path& m, const fs::path& d) { return "bench tiny=" + q(m) + " --rung cpu --runs 2 --out-json " + q(d / "b\xe9.json") + ort(); }, false},
    {"bench_json", [](const fs::path& m, const fs::path&) { return "bench tiny=" + q(m) + " --rung cpu --runs 2 --json" + ort(); }, true},
    {"parity", [](const fs::path& m, const fs::path& d) { return "parity --ref " + q(m) + " --cand " + q(m) + " --random 1 --out-json " + q(d / "p\xff.json") + ort(); }, false},
    {"parity_json", [](const fs::path& m, const fs::path&) { return "parity --ref " + q(m) + " --cand " + q(m) + " --random 1 --json" + ort(); }, true},
    {"upgrade", [](const fs::path&, const fs::path& d) { return "upgrade " + q(d / "old\xffname.onnx") + " --opset 17 --out " + q(d / "u\xff.onnx") + ort(); }, false},
};

class NotUtf8NamesCliTest : public ::testing::TestWithParam<NamedCommand> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-text-policy") / "caf\xe9";
    fs::create_directories(dir_);
    model_ = test::write_elementwise_model(dir_ / "ok\xffname.onnx", {1, 4, 8});
    test::ModelBuilder old(13);  // for upgrade, a model below its target opset
    old.input("x", {1, 4}).node("Relu", {"x"}, {"y"}).output("y", {1, 4});
    old.save(dir_ / "old\xffname.onnx");
  }
  void TearDown() override { fs::remove_all(dir_.parent_path()); }
  fs::path dir_, model_;
};

TEST_P(NotUtf8NamesCliTest, TheCommandDoesItsWorkAndItsJsonIsValid) {
  const auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG " + q(test::cli_path()) + " " + GetParam().args(model_, dir_));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  EXPECT_THAT(r.err, Not(HasSubstr("json.exception")));
  if (GetParam().json) {
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(r.out)) << r.out;
  }
  // A JSON file written into the folder is valid too.
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() != ".json") continue;
    nlohmann::json written;
    EXPECT_NO_THROW(written = nlohmann::json::parse(test::read_file(e.path()))) << e.path();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, NotUtf8NamesCliTest, ::testing::ValuesIn(kCommands),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(NotUtf8NamesConformCliTest, ATestFolderWhoseNameIsNotUtf8IsRunAndRecorded) {
  const fs::path dir = test::make_temp_dir("rung-text-policy-conform");
  const fs::path test_dir = dir / "suite" / "node" / "test_relu_\xff";
  fs::create_directories(test_dir / "test_data_set_0");
  test::ModelBuilder m;
  m.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y", {2});
  m.save(test_dir / "model.onnx");
  ASSERT_TRUE(write_value_file(Value::of(test::float_tensor("x", {-1, 2})), test_dir / "test_data_set_0" / "input_0.pb"));
  ASSERT_TRUE(write_value_file(Value::of(test::float_tensor("y", {0, 2})), test_dir / "test_data_set_0" / "output_0.pb"));
  const auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR " + q(test::cli_path()) + " conform --suite " + q(dir / "suite") +
                                   " --rung cpu --out-json " + q(dir / "c.json") + cpu_vm() + ort());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 tests in"));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  nlohmann::json record;
  ASSERT_NO_THROW(record = nlohmann::json::parse(test::read_file(dir / "c.json")));
  EXPECT_THAT(record.dump(), HasSubstr("test_relu_" + kReplacement));
  EXPECT_THAT(record.dump(), HasSubstr("\"pass\"")) << record.dump(1);
  fs::remove_all(dir);
}

// What a terminal would act on: ESC, CSI (U+009B), BEL, a carriage return,
// a bidirectional override, a byte that is not UTF-8. None may be printed raw.
std::string raw_control_in(const std::string& printed) {
  for (std::size_t i = 0; i < printed.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(printed[i]);
    if (c == 0x1b || c == 0x07 || c == '\r') return "byte " + std::to_string(c) + " at " + std::to_string(i);
    if (printed.compare(i, 2, "\xc2\x9b") == 0 || printed.compare(i, 3, "\xe2\x80\xae") == 0) return "a C1 or bidi control at " + std::to_string(i);
  }
  if (!not_utf8_why(printed).empty()) return not_utf8_why(printed);
  return "";
}

const std::string kTitle = "\x1b]0;pwned\x07";    // retitles the terminal
const std::string kClear = "\x1b[2J";              // clears the screen
const std::string kCsi = "\xc2\x9b" "31m";         // the one-character CSI
const std::string kBidi = "\xe2\x80\xae" "cod.exe"; // reads backwards

// A model whose input, output and node names are escape sequences.
fs::path write_hostile_model(const fs::path& file) {
  test::ModelBuilder m;
  m.input("x" + kTitle, {1, 4})
      .node("Relu", {"x" + kTitle}, {"y" + kClear}, "relu" + kCsi)
      .node("Neg", {"y" + kClear}, {"z" + kBidi}, "neg\r")
      .output("z" + kBidi, {1, 4});
  return m.save(file);
}

struct HostileCommand {
  const char* name;
  std::string (*args)(const fs::path& model, const fs::path& dir);
  bool names_shown;  // what it prints quotes a hostile name (the probe's table names rungs and models, not tensors)
};

const HostileCommand kHostileCommands[] = {
    {"probe", [](const fs::path& m, const fs::path& d) { return "probe --model tiny=" + q(m) + " --runs 2 --cache-dir " + q(d / "cache") + cpu_vm() + ort(); }, false},
    {"prepare", [](const fs::path& m, const fs::path& d) { return "prepare --model tiny=" + q(m) + " --cache-dir " + q(d / "cache") + cpu_vm() + ort(); }, false},
    {"bench", [](const fs::path& m, const fs::path&) { return "bench tiny=" + q(m) + " --rung cpu --runs 2" + ort(); }, true},
    {"bench_shape_of_no_input", [](const fs::path& m, const fs::path&) { return "bench tiny=" + q(m) + " --rung cpu --runs 2 --shape " + q("nope" + kClear + "=1x4") + ort(); }, true},
    {"parity", [](const fs::path& m, const fs::path&) { return "parity --ref " + q(m) + " --cand " + q(m) + " --random 1" + ort(); }, true},
    {"missing_model", [](const fs::path& m, const fs::path&) { return "bench tiny=" + q(m.parent_path() / ("gone" + kClear + ".onnx")) + " --rung cpu" + ort(); }, true},
    {"not_a_model", [](const fs::path& m, const fs::path&) { return "probe --model tiny=" + q(m.parent_path() / ("junk" + kTitle + ".onnx")) + ort(); }, true},
    {"unknown_option", [](const fs::path&, const fs::path&) { return "probe --colour" + kClear + "=1"; }, true},
    {"unknown_rung", [](const fs::path& m, const fs::path&) { return "bench tiny=" + q(m) + " --rung " + q("gpu" + kTitle) + ort(); }, true},
    {"bad_number", [](const fs::path& m, const fs::path&) { return "bench tiny=" + q(m) + " --runs " + q("3" + kCsi) + ort(); }, true},
};

class HostileNamesCliTest : public ::testing::TestWithParam<HostileCommand> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-hostile-names");
    model_ = write_hostile_model(dir_ / "m.onnx");
    test::write_text(dir_ / ("junk" + kTitle + ".onnx"), "not a model");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_, model_;
};

TEST_P(HostileNamesCliTest, NothingPrintedHoldsARawControlAndTheNamesShowEscaped) {
  const auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG " + q(test::cli_path()) + " " + GetParam().args(model_, dir_));
  EXPECT_EQ(raw_control_in(r.out), "") << r.out;
  EXPECT_EQ(raw_control_in(r.err), "") << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  // What was escaped is still there to read.
  if (GetParam().names_shown) {
    EXPECT_THAT(r.out + r.err, ::testing::AnyOf(HasSubstr("\\x1b"), HasSubstr("\\u009b"), HasSubstr("\\u202e"))) << r.out << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, HostileNamesCliTest, ::testing::ValuesIn(kHostileCommands),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(HostileNamesCliTest, AForcedRungNamedWithEscapesIsRefusedEscaped) {
  const fs::path dir = test::make_temp_dir("rung-hostile-force");
  const fs::path model = write_hostile_model(dir / "m.onnx");
  const auto r = test::run_command("env -u RUNG_ORT_DIR RUNG_FORCE_RUNG=" + q("gpu" + kClear) + " " + q(test::cli_path()) + " probe --model tiny=" + q(model) +
                                   " --runs 2 --cache-dir " + q(dir / "cache") + cpu_vm() + ort());
  EXPECT_EQ(raw_control_in(r.out), "") << r.out;
  EXPECT_EQ(raw_control_in(r.err), "") << r.err;
  fs::remove_all(dir);
}

TEST(HostileNamesCliTest, HelpAndTheEscapesOfAnOrdinaryRunAreUnchanged) {
  // The printer changes only what it must: help text, tabs and line breaks pass.
  const auto r = test::run_command(q(test::cli_path()) + " --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("\\n")));
  EXPECT_THAT(r.out, Not(HasSubstr("\\x")));
}

TEST(HostileNamesCliTest, ATestFolderAndAnImageNamedWithEscapesPrintEscaped) {
  const fs::path dir = test::make_temp_dir("rung-hostile-folders");
  const fs::path test_dir = dir / "suite" / "node" / ("test_relu" + kClear);
  fs::create_directories(test_dir / "test_data_set_0");
  test::ModelBuilder m;
  m.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y", {2});
  m.save(test_dir / "model.onnx");
  ASSERT_TRUE(write_value_file(Value::of(test::float_tensor("x", {-1, 2})), test_dir / "test_data_set_0" / "input_0.pb"));
  ASSERT_TRUE(write_value_file(Value::of(test::float_tensor("y", {0, 3})), test_dir / "test_data_set_0" / "output_0.pb"));  // a mismatch, so it is named
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR " + q(test::cli_path()) + " conform --details --suite " + q(dir / "suite") +
                             " --rung cpu" + cpu_vm() + ort());
  EXPECT_EQ(raw_control_in(r.out), "") << r.out;
  EXPECT_EQ(raw_control_in(r.err), "") << r.err;
  EXPECT_THAT(r.out, HasSubstr("test_relu\\x1b[2J")) << r.out;

  // ocr-lines on an image whose name is an escape sequence (a file that is not an image: its error names it).
  fs::create_directories(dir / "images");
  test::write_text(dir / "images" / ("page" + kTitle + ".png"), "not a png");
  r = test::run_command("env -u RUNG_ORT_DIR " + q(test::binary_dir() / "ocr-lines") + " " + q(dir / "images") + " --models " +
                        q(test::deps_dir() / "models" / "ppocr") + " --cache-dir " + q(dir / "cache") + ort());
  EXPECT_EQ(raw_control_in(r.out), "") << r.out;
  EXPECT_EQ(raw_control_in(r.err), "") << r.err;
  EXPECT_THAT(r.out + r.err, HasSubstr("page\\x1b]0;pwned\\x07.png")) << r.out << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung
