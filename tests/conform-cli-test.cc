// `rung conform` as a user runs it, on a suite built here in ONNX's backend-test
// layout with one test per outcome: pass, mismatch, not placed (on the simulated
// accelerator), runtime refused (with ONNX Runtime's reason), crashed and timed
// out (the simulated accelerator's abort_at and hang_at on one test, the rest
// going on in a new worker), sequences, optional values and strings fed, a
// download stub skipped; the record against its schema, the grid in Chromium.
// Then a small subset of Debian's libonnx-testdata on two ONNX Runtime builds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "model_builder.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using test::ElemType;



Tensor int64s(const std::string& name, std::vector<std::int64_t> values, std::vector<std::int64_t> shape) {
  Tensor t;
  t.name = name;
  t.type = ElementType::kInt64;
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * 8);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

class ConformCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-conform-cli");
    test::make_plugin_dir(dir_);
    node_ = dir_ / "suite" / "node";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A test folder: the model, and one data set of inputs and expected outputs.
  void add_test(const std::string& name, test::ModelBuilder& model, const std::vector<Value>& inputs, const std::vector<Value>& outputs,
                const fs::path& suite = {}) {
    const fs::path dir = (suite.empty() ? node_ : suite) / name;
    fs::create_directories(dir / "test_data_set_0");
    model.save(dir / "model.onnx");
    for (std::size_t k = 0; k < inputs.size(); ++k) ASSERT_TRUE(write_value_file(inputs[k], dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")));
    for (std::size_t k = 0; k < outputs.size(); ++k) ASSERT_TRUE(write_value_file(outputs[k], dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")));
  }

  void build_suite() {
    {
      test::ModelBuilder m;
      m.input("x", {3}).input("y", {3}).node("Add", {"x", "y"}, {"z"}).output("z", {3});
      add_test("test_add", m, {Value::of(test::float_tensor("x", {1, 2, 3})), Value::of(test::float_tensor("y", {0.5f, 0.25f, 0}))}, {Value::of(test::float_tensor("z", {1.5f, 2.25f, 3}))});
    }
    {
      test::ModelBuilder m;
      m.input("x", {3}).input("y", {3}).node("Add", {"x", "y"}, {"z"}).output("z", {3});
      add_test("test_add_wrong", m, {Value::of(test::float_tensor("x", {1, 2, 3})), Value::of(test::float_tensor("y", {0, 0, 0}))}, {Value::of(test::float_tensor("z", {1, 2, 4}))});
    }
    {
      test::ModelBuilder m;
      m.input("a", {2}, ElemType::Int64).node("Add", {"a", "a"}, {"b"}).output("b", {2}, ElemType::Int64);
      add_test("test_int_add", m, {Value::of(int64s("a", {3, 4}, {2}))}, {Value::of(int64s("b", {6, 8}, {2}))});
    }
    {
      test::ModelBuilder m;
      m.input("x", {2}).node("Sigmoid", {"x"}, {"y"}).output("y", {2});
      add_test("test_sigmoid", m, {Value::of(test::float_tensor("x", {0, 0}))}, {Value::of(test::float_tensor("y", {0.5f, 0.5f}))});
    }
    {
      test::ModelBuilder m;
      m.input("x", {2}).node("NoSuchOp", {"x"}, {"y"}).output("y", {2});
      add_test("test_unknown_op", m, {Value::of(test::float_tensor("x", {0, 0}))}, {Value::of(test::float_tensor("y", {0, 0}))});
    }
    {
      test::ModelBuilder m(18);
      m.sequence_input("seq", ElemType::Float).node("SequenceLength", {"seq"}, {"n"}).output("n", {}, ElemType::Int64);
      add_test("test_sequence_length", m, {Value::sequence("seq", {Value::of(test::float_tensor("a", {1})), Value::of(test::float_tensor("b", {2, 3}))})},
               {Value::of(int64s("n", {2}, {}))});
    }
    {
      test::ModelBuilder m(18);
      m.optional_input("opt", ElemType::Float).node("OptionalHasElement", {"opt"}, {"has"}).output("has", {}, ElemType::Bool);
      Tensor no;
      no.name = "has";
      no.type = ElementType::kBool;
      no.bytes = {std::byte{0}};
      add_test("test_optional_empty", m, {Value::optional("opt", std::nullopt)}, {Value::of(no)});
    }
    {
      test::ModelBuilder m;
      m.input("s", {2}, ElemType::String).node("Identity", {"s"}, {"t"}).output("t", {2}, ElemType::String);
      Tensor s;
      s.name = "s";
      s.type = ElementType::kString;
      s.shape = {2};
      s.strings = {"rung", "conform"};
      Tensor t = s;
      t.name = "t";
      add_test("test_string_identity", m, {Value::of(s)}, {Value::of(t)});
    }
    fs::create_directories(dir_ / "suite" / "real" / "test_big_model");
    std::ofstream(dir_ / "suite" / "real" / "test_big_model" / "data.json") << R"({"model_name": "big", "url": "https://example.invalid/big.tar.gz"})";
  }

  std::string conform(const std::string& args) {
    return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_SOFTWARE_GPU '" + test::cli_path().string() + "' conform --ort-dir " +
           test::runtime_dir("1.30.0").string() + " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " " + args;
  }

  std::string sim(const std::string& options = "") const { return "'" + (dir_ / "plugins" / "librung_sim_ep.so").string() + options + "'"; }

  fs::path dir_, node_;
};

TEST_F(ConformCliTest, EveryOutcomeOnItsOwnTestAndTheRestGoOn) {
  build_suite();
  const std::string json = (dir_ / "conform.json").string(), html = (dir_ / "conform.html").string();
  auto r = test::run_command(conform("--suite '" + (dir_ / "suite").string() + "' --rung cpu --rung " + sim() + " --rung " +
                                     sim(",option.ops=Sigmoid,option.abort_at=compute") + " --rung " + sim(",option.ops=Sigmoid,option.hang_at=compute") +
                                     " --deadline 5 --details --out-json '" + json + "' --html '" + html + "'"));
  // A mismatch, a crash and a timeout each fail the run (the report is still written), and the message counts them per rung.
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("conform: 1 mismatch on cpu@1.30.0, "));
  EXPECT_THAT(r.err, HasSubstr(" crashed on "));
  EXPECT_THAT(r.err, HasSubstr(" timed out on "));
  EXPECT_THAT(r.err, HasSubstr("(--report-only reports them without failing)"));
  EXPECT_THAT(r.out, HasSubstr("9 tests in"));
  EXPECT_THAT(r.out, HasSubstr("(8 run, 1 skipped"));
  EXPECT_THAT(r.out, HasSubstr("tolerance onnx_backend (atol 1e-07, rtol 0.001)"));
  // The CPU: everything but the wrong expectation and the unknown operator passes;
  // sequences, optional values and strings are all fed.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(CPU · ONNX Runtime 1\.30\.0\s+6\s+1\s+0\s+1\s+0\s+0\s+0)"))) << r.out;
  EXPECT_THAT(r.out, HasSubstr("mismatch         node/test_add_wrong: test_data_set_0: output 'z': 1 of 3 elements differ"));
  EXPECT_THAT(r.out, HasSubstr("(largest error: abs 1, rel 0.25)"));
  EXPECT_THAT(r.out, HasSubstr("runtime refused  node/test_unknown_op: "));
  EXPECT_THAT(r.out, HasSubstr("NoSuchOp"));
  // The simulated accelerator takes the float element-wise tests; an int64 Add,
  // sequences, optional values and strings it leaves to the CPU: "not placed".
  EXPECT_THAT(r.out, HasSubstr("not placed       node/test_int_add: RungSimAccelerator ran none: CPUExecutionProvider ran 1 node"));
  // abort_at=compute on Sigmoid alone: that test crashed, and the next test ran in a new worker.
  EXPECT_THAT(r.out, HasSubstr("crashed          node/test_sigmoid: the worker was killed by SIGABRT"));
  EXPECT_THAT(r.out, HasSubstr("timed out        node/test_sigmoid: the worker gave no answer within 5 s and was killed"));
  const auto rec = nlohmann::json::parse(test::read_file(json));
  EXPECT_EQ(test::schema_errors(test::schema_path("conform-record.schema.json"), json), "");
  ASSERT_EQ(rec["columns"].size(), 4u);
  const auto& crash_col = rec["columns"][2];
  EXPECT_EQ(crash_col["counts"]["crashed"], 1);
  EXPECT_EQ(crash_col["counts"]["runtime refused"], 1) << "the test after the crash ran, in a new worker";
  EXPECT_EQ(rec["columns"][3]["counts"]["timed out"], 1);
  EXPECT_EQ(rec["columns"][3]["counts"]["runtime refused"], 1) << "the test after the timeout ran, in a new worker";
  for (const auto& c : rec["columns"]) EXPECT_EQ(c["counts"]["rung cannot feed it"], 0) << c["id"];
  for (const auto& t : rec["tests"]) {
    if (t["id"] == "real/test_big_model") {
      EXPECT_THAT(t["skipped"].get<std::string>(), HasSubstr("a download stub"));
      EXPECT_TRUE(t["results"].empty());
    }
    if (t["id"] == "node/test_add") {
      EXPECT_EQ(t["operator"], "Add");
      const auto& on_sim = t["results"][rec["columns"][1]["id"].get<std::string>()];
      EXPECT_EQ(on_sim["outcome"], "pass");
      EXPECT_EQ(on_sim["placement"][0]["provider"], "RungSimAccelerator");
    }
  }
  // The grid, as Chromium builds and draws it: one cell per test and rung.
  auto dom = test::run_chromium("--dump-dom", html, dir_ / "chromium-1");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(test::occurrences(dom.out, "<div class=\"cell "), 9u * 4u);
  EXPECT_EQ(test::occurrences(dom.out, "data-outcome=\"crashed\""), 1u);
  EXPECT_EQ(test::occurrences(dom.out, "data-outcome=\"timed out\""), 1u);
  // Rows by operator: Add (three tests), Identity, NoSuchOp, OptionalHasElement, SequenceLength, Sigmoid, and the stub's.
  EXPECT_EQ(test::occurrences(dom.out, "<details class=\"op "), 7u);
  // Sigmoid crashed on one rung and timed out on another: its row counts both.
  EXPECT_TRUE(std::regex_search(dom.out, std::regex(R"(<details class="op problem"><summary class="row"><div class="name" title="Sigmoid">.*>1 crashed</span>.*>1 timed out</span>.*</summary>)"))) << dom.out;
  for (const char* fetch : {"src=", "href=", "url(", "@import", "<script"}) EXPECT_EQ(test::occurrences(test::read_file(html), fetch), 0u) << fetch;
  const fs::path shot = dir_ / "grid.png";
  auto shoot = test::run_chromium("--screenshot='" + shot.string() + "' --window-size=1280,900 --hide-scrollbars", html, dir_ / "chromium-2");
  ASSERT_EQ(shoot.exit_code, 0) << shoot.err;
  auto img = test::decode_png(shot);
  ASSERT_EQ(img.width, 1280);
  std::size_t pass_pixels = 0, crash_pixels = 0;
  for (std::size_t i = 0; i + 3 < img.rgba.size(); i += 4) {
    const auto r8 = img.rgba[i], g8 = img.rgba[i + 1], b8 = img.rgba[i + 2];
    pass_pixels += r8 == 0x2e && g8 == 0x7d && b8 == 0x32;
    crash_pixels += r8 == 0x21 && g8 == 0x21 && b8 == 0x21;
  }
  // The tests are folded under their operators: what is drawn is the count chips (the legend's, the rungs',
  // the problem rows'), some 20 x 14 px each: a pass chip per rung at least, and the crash chips of Sigmoid's row and its rung.
  EXPECT_GT(pass_pixels, 4u * 20 * 12);
  EXPECT_GT(crash_pixels, 3u * 20 * 12);
}

TEST_F(ConformCliTest, AValueRungCannotReadFailsTheRunAndSaysWhich) {
  test::ModelBuilder m;
  m.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y", {2});
  add_test("test_relu", m, {Value::of(test::float_tensor("x", {1, -1}))}, {Value::of(test::float_tensor("y", {1, 0}))});
  std::ofstream(node_ / "test_relu" / "test_data_set_0" / "input_0.pb", std::ios::trunc) << "\xff\xff\xff not a tensor";
  auto r = test::run_command(conform("--suite '" + node_.string() + "' --rung cpu --details"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(CPU · ONNX Runtime 1\.30\.0\s+0\s+0\s+0\s+0\s+1)"))) << r.out;
  EXPECT_THAT(r.out, HasSubstr("input_0.pb: not an ONNX TensorProto"));
  EXPECT_THAT(r.err, HasSubstr("rung could not feed 1 test"));
}

// The exit rule, each outcome alone: a pass, a runtime refusal and a test left to
// the CPU exit 0; one mismatch exits 1, and 0 under --report-only; rung's own gap
// (a value it cannot feed) exits 1 even under --report-only.
TEST_F(ConformCliTest, OneMismatchFailsTheRunUnlessOnlyReportedAndRefusalsDoNot) {
  build_suite();
  const std::string suite = " --suite '" + (dir_ / "suite").string() + "' --rung cpu --filter ";
  auto pass = test::run_command(conform(suite + "'test_add$'"));
  EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;
  auto refused = test::run_command(conform(suite + "'test_add$|test_unknown_op$'"));
  EXPECT_EQ(refused.exit_code, 0) << "a runtime refusal is what a rung does not take, not a wrong answer\n" << refused.out << refused.err;
  auto not_placed = test::run_command(conform(" --suite '" + (dir_ / "suite").string() + "' --rung " + sim() + " --filter 'test_int_add$'"));
  EXPECT_EQ(not_placed.exit_code, 0) << not_placed.out << not_placed.err;
  EXPECT_THAT(not_placed.out, HasSubstr("not placed"));
  auto mismatch = test::run_command(conform(suite + "'test_add$|test_add_wrong$'"));
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.out << mismatch.err;
  EXPECT_THAT(mismatch.err, HasSubstr("conform: 1 mismatch on cpu@1.30.0 (--report-only reports them without failing)"));
  auto reported = test::run_command(conform(suite + "'test_add$|test_add_wrong$' --report-only"));
  EXPECT_EQ(reported.exit_code, 0) << reported.out << reported.err;
  EXPECT_THAT(reported.out, HasSubstr("CPU · ONNX Runtime 1.30.0"));
  EXPECT_EQ(reported.err, "");
  std::ofstream(node_ / "test_add" / "test_data_set_0" / "input_0.pb", std::ios::trunc) << "\xff\xff\xff not a tensor";
  auto unfed = test::run_command(conform(suite + "'test_add$' --report-only"));
  EXPECT_EQ(unfed.exit_code, 1) << unfed.out << unfed.err;
  EXPECT_THAT(unfed.err, HasSubstr("rung could not feed 1 test"));
}

// The filter is matched by RE2 (conform/filter.h): taken up to 1000 bytes, refused
// beyond (exit 2, before any worker), and never a crash however long or deep.
TEST_F(ConformCliTest, AFilterIsTakenUpToItsBoundAndALongerOrDeeperOneIsRefusedNotACrash) {
  build_suite();
  const std::string suite = " --suite '" + (dir_ / "suite").string() + "' --rung cpu --filter ";
  auto padded = [](std::string p, std::size_t bytes) { return p + std::string(bytes - p.size(), 'z'); };
  // Exactly at the bound: taken, and it finds test_add alone (the padding is an alternative that finds nothing).
  auto at = test::run_command(conform(suite + "'" + padded("test_add$|", 1000) + "'"));
  EXPECT_EQ(at.exit_code, 0) << at.err;
  EXPECT_THAT(at.out, HasSubstr("1 tests in"));
  // One byte over, and far over: refused by length, the length said.
  auto over = test::run_command(conform(suite + "'" + padded("test_add$|", 1001) + "'"));
  EXPECT_EQ(over.exit_code, 2);
  EXPECT_THAT(over.err, HasSubstr("--filter is 1001 bytes long; at most 1000 are taken"));
  auto huge = test::run_command(conform(suite + "'" + padded("test_add$|", 100000) + "'"));
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_THAT(huge.err, HasSubstr("--filter is 100000 bytes long"));
  auto nested = test::run_command(conform(suite + "'" + std::string(20000, '(') + "test_add" + std::string(20000, ')') + "'"));
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_THAT(nested.err, HasSubstr("--filter is 40008 bytes long"));
  // Deep nesting within the bound is matched without recursion.
  auto deep = test::run_command(conform(suite + "'" + std::string(490, '(') + "test_add$" + std::string(490, ')') + "'"));
  EXPECT_EQ(deep.exit_code, 0) << deep.err;
  EXPECT_THAT(deep.out, HasSubstr("1 tests in"));
  // Nested repetition, exponential for a backtracking matcher, is linear here.
  auto repeated = test::run_command(conform(suite + "'^(([a-z_/]*)*)*x$|test_add$'"));
  EXPECT_EQ(repeated.exit_code, 0) << repeated.err;
  EXPECT_THAT(repeated.out, HasSubstr("1 tests in"));
  // A backreference is no regular expression RE2 runs: refused, with its reason.
  auto backref = test::run_command(conform(suite + "'(add)\\1'"));
  EXPECT_EQ(backref.exit_code, 2);
  EXPECT_THAT(backref.err, HasSubstr("is not a regular expression: invalid escape sequence"));
  for (const auto* r : {&over, &huge, &nested, &backref}) EXPECT_THAT(r->err, Not(HasSubstr("internal error")));
}

TEST_F(ConformCliTest, UsageErrorsAreSaidAndExitTwo) {
  build_suite();
  const std::string suite = " --suite '" + (dir_ / "suite").string() + "'";
  auto missing = test::run_command(conform("--suite '" + (dir_ / "nowhere").string() + "' --rung cpu"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("nowhere: does not exist"));
  auto regex = test::run_command(conform(suite + " --rung cpu --filter '('"));
  EXPECT_EQ(regex.exit_code, 2);
  EXPECT_THAT(regex.err, HasSubstr("is not a regular expression"));
  auto none = test::run_command(conform(suite + " --rung cpu --filter 'no_such_test'"));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("leaves no test"));
  auto spec = test::run_command(conform(suite + " --rung cpu,threads=2"));
  EXPECT_EQ(spec.exit_code, 2);
  EXPECT_THAT(spec.err, HasSubstr("expected ort=VERSION or option.KEY=VALUE after the rung, not 'threads=2'"));
  auto build = test::run_command(conform(suite + " --rung cpu,ort=0.1"));
  EXPECT_EQ(build.exit_code, 3);
  EXPECT_THAT(build.err, HasSubstr("no ONNX Runtime 0.1 among the builds found"));
}

TEST_F(ConformCliTest, ARungThatCannotStartIsANoteThatSaysWhy) {
  build_suite();
  auto r = test::run_command(conform("--suite '" + node_.string() + "' --filter test_add$ --rung cpu --rung cuda"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(CUDA: not available here — ONNX Runtime's CUDA provider \(libonnxruntime_providers_cuda\.so\) is not beside libonnxruntime\.so\.1)"))) << r.out;
}

// A fast subset of Debian's libonnx-testdata (CI runs this; the whole suite is
// run on demand, with its figures in the README): the CPU rung of two builds,
// strings, bfloat16 (stored as uint16 bit patterns by ONNX 1.12), unsigned
// types, sequences and optional values among them.
TEST_F(ConformCliTest, DebianTestDataSubsetOnTheCpuOfTwoBuilds) {
  const fs::path data = "/usr/share/libonnx-testdata/data";
  if (!fs::is_directory(data)) GTEST_SKIP() << data << " is not there: tools/bootstrap.sh installs Debian's libonnx-testdata";
  const std::string json = (dir_ / "subset.json").string();
  auto r = test::run_command(conform(
      "--rung cpu --rung cpu,ort=1.28.2 --details --out-json '" + json + "' --filter "
      "'^(node/test_(abs|add|cast_FLOAT_to_STRING|cast_FLOAT_to_BFLOAT16|identity_sequence|optional_has_element_empty|"
      "optional_get_element_sequence|sequence_insert_at_back|bitshift_left_uint16|max_uint64)|real/test_resnet50)$'"));
  // Each build writes one float as a string differently from ONNX: a mismatch on each, which fails the run.
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("conform: 1 mismatch on cpu@1.30.0, 1 mismatch on cpu@1.28.2 (--report-only"));
  EXPECT_THAT(r.out, HasSubstr("11 tests in /usr/share/libonnx-testdata/data (10 run, 1 skipped"));
  for (const char* build : {"1\\.30\\.0", "1\\.28\\.2"}) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex(std::string("CPU · ONNX Runtime ") + build + R"(\s+8\s+1\s+0\s+1\s+0\s+0\s+0)"))) << r.out;
  }
  // ONNX Runtime's own reason for what it cannot run; a real difference in how it writes a float as a string.
  EXPECT_THAT(r.out, HasSubstr("runtime refused  node/test_bitshift_left_uint16: Could not find an implementation for BitShift(11)"));
  EXPECT_THAT(r.out, HasSubstr("mismatch         node/test_cast_FLOAT_to_STRING: test_data_set_0: output 'output': 3 of 12 strings differ"));
  EXPECT_EQ(test::schema_errors(test::schema_path("conform-record.schema.json"), json), "");
}

}  // namespace
}  // namespace rung
