// `rung bench` with forms of one model, as a user runs it: NAME:FORM=PATH and
// NAME_FORM.onnx grouping, --json on stdout alone, --csv read back by Python's
// csv module, --shape refused at each boundary with exit 2, and the HTML
// report's bars of one model on one scale in Chromium's screenshot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

void write_text(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

fs::path matmul_model(const fs::path& file, int64_t n, int times) {
  test::ModelBuilder b;
  b.input("x", {1, n, n});
  std::string last = "x";
  for (int i = 0; i < times; ++i) {
    const std::string out = i + 1 == times ? "y" : "m" + std::to_string(i);
    b.node("MatMul", {last, "x"}, {out});
    last = out;
  }
  b.output("y", {1, n, n});
  return b.save(file);
}

class BenchFormsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-bench-forms-cli");
    test::make_plugin_dir(dir_);
    matmul_model(dir_ / "det.onnx", 128, 1);
    matmul_model(dir_ / "det_i8.onnx", 128, 8);  // named as `rung quantise` names a form; slower here on purpose
    test::ModelBuilder d;
    d.input("img", {1, 3, -1, -1}).node("Relu", {"img"}, {"y"}).output("y", {1, 3, -1, -1});
    d.save(dir_ / "dyn.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string bench(const std::string& args) {
    return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR '" + test::cli_path().string() + "' bench --ort-dir " + test::runtime_dir("1.30.0").string() +
           " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --plugin-dir " + (dir_ / "plugins").string() +
           " --warmup 1 " + args;
  }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(BenchFormsCliTest, NameUnderscoreFormBesideNameIsOneModelInTableRecordAndCsv) {
  auto r = test::run_command(bench(path("det.onnx") + " " + path("det_i8.onnx") + " --runs 8 --rung rung_sim_ep --out-json " + path("rec") +
                                   " --csv " + path("t.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("det · 2 forms"));
  EXPECT_THAT(r.out, HasSubstr("x floor [99%]"));
  EXPECT_THAT(r.out, HasSubstr("x f32 [99%]"));
  EXPECT_THAT(r.out, HasSubstr("1.00× [1.00–1.00]"));
  // One model, one record (a file: one model), both forms in it.
  ASSERT_TRUE(fs::is_regular_file(dir_ / "rec"));
  auto j = nlohmann::json::parse(test::read_file(dir_ / "rec"));
  EXPECT_EQ(j["model"]["name"], "det");
  ASSERT_EQ(j["model"]["forms"].size(), 2u);
  EXPECT_EQ(j["model"]["forms"][0]["label"], "f32");
  EXPECT_EQ(j["model"]["forms"][1]["label"], "i8");
  EXPECT_EQ(j["measurements"][0]["rows"].size(), 4u);
  EXPECT_EQ(test::schema_errors(test::schema_path("bench-record.schema.json"), dir_ / "rec"), "");

  // The CSV, read by Python's csv module: one row per form × rung with the record's figures.
  const std::string script =
      "import csv, json, sys\n"
      "rows = list(csv.DictReader(open(sys.argv[1], newline='')))\n"
      "print(json.dumps(rows))\n";
  write_text(dir_ / "read.py", script);
  auto py = test::run_command("/usr/bin/python3 " + path("read.py") + " " + path("t.csv"));
  ASSERT_EQ(py.exit_code, 0) << py.err;
  auto rows = nlohmann::json::parse(py.out);
  ASSERT_EQ(rows.size(), 4u);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& rec = j["measurements"][0]["rows"][i];
    EXPECT_EQ(row["model"], "det");
    EXPECT_EQ(row["form"], rec["model_form"]);
    EXPECT_EQ(row["rung"], rec["rung"]);
    EXPECT_EQ(row["build"], "1.30.0");
    EXPECT_EQ(row["ok"], "true");
    EXPECT_NEAR(std::stod(row["p50_ms"].get<std::string>()), rec["latency_ms"]["p50"].get<double>(), 1e-4 * rec["latency_ms"]["p50"].get<double>());
    EXPECT_LE(std::stod(row["x_floor_low"].get<std::string>()), std::stod(row["x_floor"].get<std::string>()));
    EXPECT_LE(std::stod(row["x_floor"].get<std::string>()), std::stod(row["x_floor_high"].get<std::string>()));
    EXPECT_LE(std::stod(row["x_f32_low"].get<std::string>()), std::stod(row["x_f32"].get<std::string>()));
    EXPECT_LE(std::stod(row["x_f32"].get<std::string>()), std::stod(row["x_f32_high"].get<std::string>()));
    EXPECT_FALSE(row["placed_nodes"].get<std::string>().empty());
    seen.insert(row["form"].get<std::string>() + "/" + row["rung"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::set<std::string>{"f32/cpu", "f32/rung_sim_ep", "i8/cpu", "i8/rung_sim_ep"}));
  EXPECT_EQ(rows[0]["verdict"], "reference");
}

TEST_F(BenchFormsCliTest, ACsvFieldWithACommaOrAQuoteIsQuoted) {
  auto r = test::run_command(bench("'a\"b,c=" + path("det.onnx") + "' --runs 2 --rung cpu --csv " + path("t.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = test::read_file(dir_ / "t.csv");
  EXPECT_THAT(text, HasSubstr("\r\n\"a\"\"b,c\",f32,"));  // RFC 4180: quoted, the quote doubled, CRLF line ends
  write_text(dir_ / "read.py", "import csv, sys\nrows = list(csv.reader(open(sys.argv[1], newline='')))\n"
                                     "assert all(len(r) == len(rows[0]) for r in rows), rows\nprint(len(rows), rows[1][0])\n");
  auto py = test::run_command("/usr/bin/python3 " + path("read.py") + " " + path("t.csv"));
  ASSERT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out, "2 a\"b,c\n");
}

TEST_F(BenchFormsCliTest, JsonPrintsTheRecordsOnStdoutAndNothingElse) {
  auto r = test::run_command(bench("det:f32=" + path("det.onnx") + " det:i8=" + path("det_i8.onnx") + " sq=" + path("dyn.onnx") +
                                   " --shape img=1x3x8x8 --runs 2 --rung cpu --json --csv " + path("t.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  write_text(dir_ / "out.json", r.out);  // stdout, whole
  auto tool = test::run_command("/usr/bin/python3 -m json.tool " + path("out.json"));
  EXPECT_EQ(tool.exit_code, 0) << tool.err << test::read_file(dir_ / "out.json");
  const auto doc = nlohmann::json::parse(test::read_file(dir_ / "out.json"));
  EXPECT_EQ(doc["schema"], "rung-bench-records");
  EXPECT_EQ(test::schema_errors(test::schema_path("bench-records.schema.json"), dir_ / "out.json"), "");
  const auto& j = doc["records"];
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);  // det (two forms) and sq
  EXPECT_EQ(j[0]["model"]["name"], "det");
  EXPECT_EQ(j[0]["model"]["forms"].size(), 2u);
  EXPECT_EQ(j[1]["model"]["name"], "sq");
  EXPECT_THAT(j[1]["measurements"][0]["settings"]["inputs_described"].get<std::string>(), HasSubstr("[1, 3, 8, 8]"));
  // The files' names go to stderr then.
  EXPECT_THAT(r.err, HasSubstr("table: " + path("t.csv")));
  // --out-json - is the same.
  auto dash = test::run_command(bench("det=" + path("det.onnx") + " --runs 2 --rung cpu --out-json -"));
  ASSERT_EQ(dash.exit_code, 0) << dash.err;
  EXPECT_EQ(nlohmann::json::parse(dash.out)["schema"], "rung-bench-records") << dash.out;
}

TEST_F(BenchFormsCliTest, ShapeIsRefusedWithExit2NamingTheInput) {
  const std::string m = "sq=" + path("dyn.onnx") + " --runs 1 --rung cpu --csv " + path("t.csv");
  for (const auto& [shape, message] : std::vector<std::pair<std::string, std::string>>{
           {"nope=1x3x8x8", "no input 'nope' (its inputs: img)"},
           {"img=1x3x8", "input 'img' has rank 4, not 3"},
           {"img=1x3x8x8x1", "input 'img' has rank 4, not 5"},
           {"img=1x4x8x8", "axis 1 of input 'img' is fixed at 3, not 4"},
           {"img=1x3x0x8", "must be at least 1"},
           {"img=1x3x-8x8", "not a positive whole number"},
           {"img=1x3xeightx8", "not a positive whole number"},
           {"img=1x3x2048x2048 --max-tensor-mb 47", "more than the 47 MiB allowed"}}) {
    auto r = test::run_command(bench(m + " --shape " + shape));
    EXPECT_EQ(r.exit_code, 2) << shape << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << shape;
    EXPECT_FALSE(fs::exists(dir_ / "t.csv")) << shape;
  }
  // 1x3x2048x2048 float32 is exactly 48 MiB: allowed at 48.
  auto fits = test::run_command(bench(m + " --shape img=1x3x2048x2048 --max-tensor-mb 48"));
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.out, HasSubstr("img float32 [1, 3, 2048, 2048]"));
}

TEST_F(BenchFormsCliTest, TwoFilesOfOneFormNeedALabel) {
  auto r = test::run_command(bench("det=" + path("det.onnx") + " det=" + path("dyn.onnx") + " --runs 1 --rung cpu"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("are both its 'f32' form"));
  auto bad = test::run_command(bench("det:=" + path("det.onnx") + " --runs 1 --rung cpu"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("the form '' must be"));
  // The old spelling `--json FILE`: FILE would be read as a model; it is refused pointing at --out-json.
  auto old = test::run_command(bench(path("det.onnx") + " --runs 1 --rung cpu --json " + path("r.json")));
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_THAT(old.err, HasSubstr("--out-json " + path("r.json")));
  EXPECT_FALSE(fs::exists(dir_ / "r.json"));
}

// The scale: every form × rung of a model in one chart, bar lengths in the ratio of their p50s.
TEST_F(BenchFormsCliTest, ChromiumDrawsAModelsFormsOnOneScale) {
  auto r = test::run_command(bench("det=" + path("det.onnx") + " det:slow=" + path("det_i8.onnx") + " --runs 15 --rung cpu --json --html " +
                                   path("page.html")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["records"];
  ASSERT_EQ(j.size(), 1u);
  const auto& rows = j[0]["measurements"][0]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  const double fast = rows[0]["latency_ms"]["p50"], slow = rows[1]["latency_ms"]["p50"];
  ASSERT_EQ(rows[1]["model_form"], "slow");
  ASSERT_GT(slow, 1.3 * fast) << "eight MatMuls against one";

  const std::string html = test::read_file(dir_ / "page.html");
  EXPECT_EQ(std::count(html.begin(), html.end(), '\0'), 0);
  EXPECT_THAT(html, HasSubstr("det (forms f32, slow)"));
  EXPECT_THAT(html, HasSubstr("<th title=\"this form's time over the f32 form's"));
  const fs::path shot = dir_ / "shot.png";
  auto shoot = test::run_chromium("--screenshot='" + shot.string() + "' --window-size=1280,700 --hide-scrollbars --force-device-scale-factor=1",
                                  dir_ / "page.html", dir_ / "chromium-profile");
  ASSERT_EQ(shoot.exit_code, 0) << shoot.err;
  auto img = test::decode_png(shot);
  ASSERT_EQ(img.width, 1280);
  // Each bar: the rows of pixels in the bar's fill; its length is the span from its first to its last such pixel.
  std::vector<std::pair<int, int>> bars;  // (rows, length) per bar, top to bottom
  bool in_bar = false;
  for (int y = 0; y < img.height; ++y) {
    int first = -1, last = -1;
    for (int x = 0; x < img.width; ++x) {
      const std::size_t i = (static_cast<std::size_t>(y) * img.width + x) * 4;
      if (img.rgba[i] == 0x3b && img.rgba[i + 1] == 0x6f && img.rgba[i + 2] == 0xb6) {
        if (first < 0) first = x;
        last = x;
      }
    }
    if (first < 0) {
      in_bar = false;
      continue;
    }
    if (!in_bar) bars.push_back({0, 0});
    in_bar = true;
    bars.back().first++;
    bars.back().second = std::max(bars.back().second, last - first + 1);
  }
  ASSERT_EQ(bars.size(), 2u);
  for (const auto& b : bars) EXPECT_GE(b.first, 16);  // 18 px tall bars
  // One scale: the slower form's bar is the full 520 px, the faster one in proportion (within 2 px of rounding).
  EXPECT_NEAR(bars[1].second, 520, 2);
  EXPECT_NEAR(bars[0].second, 520.0 * fast / slow, 2.0) << fast << " " << slow;
}

}  // namespace
}  // namespace rung
