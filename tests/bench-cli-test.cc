// `rung bench` as a user runs it: the table, the record, the HTML report
// rendered by headless Chromium, progress only on a terminal, and bad input
// refused with no record left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "model_builder.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

class BenchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-bench-cli");
    test::make_plugin_dir(dir_);
    test::ModelBuilder a;
    a.input("x", {1, 32, 32}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 32, 32});
    a.save(dir_ / "tiny.onnx");
    test::ModelBuilder b;
    b.input("x", {1, 8}).node("Mul", {"x", "x"}, {"y"}).output("y", {1, 8});
    b.save(dir_ / "square.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string bench(const std::string& args, const std::string& env = "") {
    return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR " + env + " '" + test::cli_path().string() + "' bench --ort-dir " +
           test::runtime_dir("1.30.0").string() + " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() +
           " --plugin-dir " + (dir_ / "plugins").string() + " --warmup 1 " + args;
  }

  // Headless Chromium, as the issue asks: a fresh profile each time.
  test::CommandResult chromium(const std::string& mode, const fs::path& html) {
    return test::run_chromium(mode, html, dir_ / ("chromium-profile-" + std::to_string(profile_count_++)));
  }

  fs::path dir_;
  int profile_count_ = 0;
};

TEST_F(BenchCliTest, TableRecordAndAReportChromiumRendersWithOneBarPerRow) {
  const std::string models = "tiny=" + (dir_ / "tiny.onnx").string() + " square=" + (dir_ / "square.onnx").string();
  // WebGPU fails to build here (no adapter): a failed row. linux/arm64's build carries no WebGPU to fail.
  const bool failing = test::kFetched130CarriesGpuProviders;
  const std::size_t rows = failing ? 3 : 2;
  auto r = test::run_command(bench(models + " --runs 5 --rung rung_sim_ep" + (failing ? " --rung webgpu" : "") + " --out-json '" +
                                   (dir_ / "records").string() + "' --html '" + (dir_ / "report.html").string() + "'"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The table: every model, every rung, the floor marked, a failed rung with its class.
  EXPECT_THAT(r.out, HasSubstr("tiny (tiny.onnx, f32"));
  EXPECT_THAT(r.out, HasSubstr("square (square.onnx, f32"));
  EXPECT_THAT(r.out, HasSubstr("CPU (floor)"));
  EXPECT_THAT(r.out, HasSubstr("reference (floor)"));
  EXPECT_THAT(r.out, HasSubstr("match (max abs 0)"));
  if (failing) {
    EXPECT_THAT(r.out, HasSubstr("failed (build_failed): "));
  }
  EXPECT_THAT(r.out, HasSubstr("RungSimAccelerator ran"));
  // Not a terminal: no progress line.
  EXPECT_THAT(r.err, Not(HasSubstr("bench tiny ·")));
  EXPECT_THAT(r.err, Not(HasSubstr("\r")));

  // One record per model.
  for (const char* name : {"tiny", "square"}) {
    auto j = nlohmann::json::parse(test::read_file(dir_ / "records" / (std::string(name) + ".json")));
    EXPECT_EQ(j["model"]["name"], name);
    EXPECT_EQ(j["measurements"][0]["rows"].size(), rows);
    const std::string command = j["measurements"][0]["provenance"]["command"];
    EXPECT_THAT(command, ::testing::StartsWith("rung bench --ort-dir "));
    EXPECT_THAT(command, HasSubstr(" tiny=" + (dir_ / "tiny.onnx").string() + " square="));
    // The floor's placement is what ran on it: every node, by the CPU; the accelerator's row, the nodes it took.
    const auto& floor_row = j["measurements"][0]["rows"][0];
    ASSERT_EQ(floor_row["rung"], "cpu");
    EXPECT_GT(floor_row["placement"]["total_nodes"].get<int>(), 0);
    EXPECT_EQ(floor_row["placement"]["placed_nodes"], floor_row["placement"]["total_nodes"]) << floor_row.dump();
    EXPECT_EQ(floor_row["placement"]["time_share"], 1.0) << floor_row.dump();
    const auto& sim_row = j["measurements"][0]["rows"][1];
    ASSERT_EQ(sim_row["rung"], "rung_sim_ep");
    EXPECT_EQ(sim_row["placement"]["placed_nodes"], sim_row["placement"]["total_nodes"]) << "the accelerator takes these elementwise nodes";
  }

  // The page: self-contained, one bar and one table row per row (each rung x 2 models).
  const std::string html = test::read_file(dir_ / "report.html");
  EXPECT_EQ(count(html, "<rect class=\"bar "), 2 * rows);
  EXPECT_EQ(count(html, "<tr class=\"row"), 2 * rows);
  EXPECT_EQ(count(html, "class=\"floor\""), 2u);  // the floor marked in each model's chart
  EXPECT_EQ(count(html, "floor · reference"), 4u);  // chart and table, per model
  for (const char* fetch : {"src=", "href=", "url(", "@import", "<script"}) EXPECT_EQ(count(html, fetch), 0u) << fetch;

  // Rendered: the DOM Chromium built has the bars, and the screenshot is not blank.
  auto dom = chromium("--dump-dom", dir_ / "report.html");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(std::regex_search(dom.out, std::regex("<svg id=\"p50-chart\"")), true);
  EXPECT_EQ(count(dom.out, "<rect class=\"bar "), 2 * rows);
  const fs::path shot = dir_ / "shot.png";
  auto shoot = chromium("--screenshot='" + shot.string() + "' --window-size=1280,900 --hide-scrollbars", dir_ / "report.html");
  ASSERT_EQ(shoot.exit_code, 0) << shoot.err;
  auto img = test::decode_png(shot);
  ASSERT_EQ(img.width, 1280);
  ASSERT_EQ(img.height, 900);
  std::size_t bar_pixels = 0, non_white = 0;
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i + 3 < img.rgba.size(); i += 4) {
    const auto r8 = img.rgba[i], g8 = img.rgba[i + 1], b8 = img.rgba[i + 2];
    if (r8 == 0x3b && g8 == 0x6f && b8 == 0xb6) ++bar_pixels;  // the match/reference bar fill
    if (r8 < 250 || g8 < 250 || b8 < 250) ++non_white;
    colours.insert(static_cast<std::uint32_t>(r8) << 16 | static_cast<std::uint32_t>(g8) << 8 | b8);
  }
  EXPECT_GT(non_white, 20000u);
  EXPECT_GT(colours.size(), 20u);
  // Four drawn bars (CPU and the simulated accelerator, two models), each at least 2 x 18 px.
  EXPECT_GT(bar_pixels, 4u * 2 * 18);
}

TEST_F(BenchCliTest, ASecondRunAppendsToTheRecord) {
  const std::string file = (dir_ / "tiny.json").string();
  const std::string args = (dir_ / "tiny.onnx").string() + " --runs 3 --rung cpu --out-json '" + file + "'";
  ASSERT_EQ(test::run_command(bench(args)).exit_code, 0);
  auto second = test::run_command(bench(args));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  auto j = nlohmann::json::parse(test::read_file(file));
  EXPECT_EQ(j["measurements"].size(), 2u);
}

// Eight benches appending to one record at once: each reads, merges and
// rewrites it under the record's lock, so all eight measurements are there.
TEST_F(BenchCliTest, EightBenchesAppendingToOneRecordAtOnceLoseNoMeasurement) {
  const std::string file = (dir_ / "shared.json").string();
  const std::string one = bench((dir_ / "tiny.onnx").string() + " --runs 2 --rung cpu --out-json '" + file + "' >/dev/null 2>&1");
  std::string all = "pids=''; ";
  for (int i = 0; i < 8; ++i) all += "( " + one + " ) & pids=\"$pids $!\"; ";
  all += "rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc";
  std::ofstream(dir_ / "eight.sh") << all;
  auto r = test::run_command("sh " + test::q(dir_ / "eight.sh"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(test::read_file(file));
  EXPECT_EQ(j["measurements"].size(), 8u);
  EXPECT_TRUE(fs::is_regular_file(dir_ / ".shared.json.lock")) << "the lock stays beside the record";
}

TEST_F(BenchCliTest, EveryTensorTypeIsGeneratedRunAndCompared) {
  using test::ElemType;
  test::ModelBuilder m(18);
  m.input("s", {2, 3}, ElemType::String).node("Identity", {"s"}, {"s_out"}).output("s_out", {2, 3}, ElemType::String);
  m.input("u", {4}, ElemType::Uint64).node("Add", {"u", "u"}, {"u2"}).output("u2", {4}, ElemType::Uint64);
  m.input("w", {4}, ElemType::Uint32).node("Identity", {"w"}, {"w_out"}).output("w_out", {4}, ElemType::Uint32);
  m.input("h", {4}, ElemType::Uint16).node("Identity", {"h"}, {"h_out"}).output("h_out", {4}, ElemType::Uint16);
  m.input("f", {4}).node("Cast", {"f"}, {"bf"}).attribute("to", int64_t{16}).output("bf", {4}, ElemType::BFloat16);
  m.save(dir_ / "types.onnx");
  for (const char* input : {"random", "zeros"}) {
    auto r = test::run_command(bench((dir_ / "types.onnx").string() + " --runs 2 --rung rung_sim_ep --input " + input));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("s string [2, 3]"));
    EXPECT_THAT(r.out, HasSubstr("u uint64 [4]"));
    EXPECT_THAT(r.out, HasSubstr("h uint16 [4]"));
    // The simulated accelerator claims none of these nodes: it computes what the CPU does, and says so.
    EXPECT_THAT(r.out, HasSubstr("match"));
    EXPECT_THAT(r.out, Not(HasSubstr("element type")));
  }
}

TEST_F(BenchCliTest, ProgressIsShownOnATerminal) {
  // script(1) gives the command a terminal; RUNG_SIM_EP_COMPUTE_DELAY_US keeps the loop long enough to be seen.
  const std::string cmd = bench((dir_ / "tiny.onnx").string() + " --runs 40 --rung rung_sim_ep", "RUNG_SIM_EP_COMPUTE_DELAY_US=10000");
  std::ofstream(dir_ / "run.sh") << cmd << "\n";
  auto r = test::run_command("script -qec 'sh " + (dir_ / "run.sh").string() + "' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("bench tiny · rung_sim_ep · "));
  EXPECT_THAT(r.out, HasSubstr("/40 runs"));
}

class BenchCliBadInput : public BenchCliTest {
 protected:
  void expect_refused(const std::string& args, const std::string& message) {
    const fs::path record = dir_ / "out" / "record.json", page = dir_ / "out" / "page.html";
    fs::create_directories(dir_ / "out");
    const std::string runs = args.find("--runs") == std::string::npos ? " --runs 3" : "";
    auto r = test::run_command(bench(args + runs + " --out-json '" + record.string() + "' --html '" + page.string() + "'"));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
    // Nothing written: no record, no page, no temporary left beside them.
    EXPECT_TRUE(fs::is_empty(dir_ / "out")) << args;
  }
};

TEST_F(BenchCliBadInput, MissingModel) { expect_refused((dir_ / "nope.onnx").string(), "nope.onnx: does not exist"); }

TEST_F(BenchCliBadInput, ModelThatDoesNotParse) {
  std::ofstream(dir_ / "text.onnx") << "definitely not protobuf\n";
  expect_refused((dir_ / "text.onnx").string(), ": not an ONNX model: ");
}

TEST_F(BenchCliBadInput, InputDirectoryWithTheWrongShape) {
  Tensor wrong{"x", ElementType::kFloat, {1, 32, 16}, std::vector<std::byte>(32 * 16 * 4), {}};
  fs::create_directories(dir_ / "inputs");
  ASSERT_TRUE(write_tensor_file(wrong, dir_ / "inputs" / "x.pb"));
  expect_refused((dir_ / "tiny.onnx").string() + " --input '" + (dir_ / "inputs").string() + "'",
                 "input 'x' is [1, 32, 16], the model wants [1, 32, 32]");
}

TEST_F(BenchCliBadInput, ZeroRuns) { expect_refused((dir_ / "tiny.onnx").string() + " --runs 0", "--runs: 0 is out of range; expected a whole number of runs from 1 to 1000000"); }

TEST_F(BenchCliBadInput, RungThatIsNotOnThisMachine) {
  expect_refused((dir_ / "tiny.onnx").string() + " --rung migraphx", "no rung 'migraphx' on this device");
}

TEST_F(BenchCliBadInput, ExistingFileThatIsNotARecord) {
  fs::create_directories(dir_ / "out");
  std::ofstream(dir_ / "notes.json") << "[1, 2, 3]";
  auto r = test::run_command(bench((dir_ / "tiny.onnx").string() + " --runs 3 --out-json '" + (dir_ / "notes.json").string() + "'"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(": not a rung bench record: "));
  EXPECT_EQ(test::read_file(dir_ / "notes.json"), "[1, 2, 3]");
}

}  // namespace
}  // namespace rung
