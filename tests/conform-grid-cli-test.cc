// The conform grid as a user reads it: a run over a small suite with a failing
// operator (a mismatch on every rung, and a refusal on the simulated
// accelerator, whose compiler rejects the Sigmoid node), passing operators, one
// the accelerator leaves to the CPU and a download stub, on the CPU, that
// accelerator and two rungs that cannot start here (CUDA, TensorRT), asked for
// before the CPU. The page, as Chromium builds it and draws it at 1400x900:
// the per-operator count rows on the first screen, problems first and the rest
// folded; the CPU's column first and on screen; the rungs that cannot start
// in one note, not columns; the legend naming each outcome once. The terminal
// summary and the record carry the grid's counts; --json puts the record, and
// nothing else, on stdout.
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



Tensor int64s(const std::string& name, std::vector<std::int64_t> values) {
  Tensor t;
  t.name = name;
  t.type = ElementType::kInt64;
  t.shape = {static_cast<std::int64_t>(values.size())};
  t.bytes.resize(values.size() * 8);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

struct Rgb {
  std::uint8_t r, g, b;
};
bool is(const test::Image& img, int x, int y, Rgb c) {
  const std::size_t i = (static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) + static_cast<std::size_t>(x)) * 4;
  return img.rgba[i] == c.r && img.rgba[i + 1] == c.g && img.rgba[i + 2] == c.b;
}

// The bands of rows (top, bottom) whose pixels in x 1300..1379 (the right end of the grid's rows, where no
// text or chip is drawn in these runs) all have the colour.
std::vector<std::pair<int, int>> bands(const test::Image& img, Rgb c) {
  std::vector<std::pair<int, int>> out;
  for (int y = 0; y < img.height; ++y) {
    int n = 0;
    for (int x = 1300; x < 1380; ++x) n += is(img, x, y, c);
    if (n < 80) continue;
    if (!out.empty() && out.back().second == y - 1) {
      out.back().second = y;
    } else {
      out.emplace_back(y, y);
    }
  }
  return out;
}

// The columns (leftmost, rightmost) where the colour is, in any row; {-1, -1} when nowhere.
std::pair<int, int> x_extent(const test::Image& img, Rgb c) {
  std::pair<int, int> e{-1, -1};
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      if (!is(img, x, y, c)) continue;
      if (e.first < 0 || x < e.first) e.first = x;
      e.second = std::max(e.second, x);
    }
  }
  return e;
}

// The text of the element that starts at `open` ("<ul class=\"legend\">") up to `close`.
std::string section(const std::string& dom, const std::string& open, const std::string& close) {
  const auto a = dom.find(open);
  if (a == std::string::npos) return "";
  const auto b = dom.find(close, a);
  return dom.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

class ConformGridTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-conform-grid");
    test::make_plugin_dir(dir_);
    node_ = dir_ / "suite" / "node";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void add_test(const std::string& name, test::ModelBuilder& model, const std::vector<Value>& inputs, const std::vector<Value>& outputs) {
    const fs::path dir = node_ / name;
    fs::create_directories(dir / "test_data_set_0");
    model.save(dir / "model.onnx");
    for (std::size_t k = 0; k < inputs.size(); ++k) ASSERT_TRUE(write_value_file(inputs[k], dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")));
    for (std::size_t k = 0; k < outputs.size(); ++k) ASSERT_TRUE(write_value_file(outputs[k], dir / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")));
  }

  void unary(const std::string& name, const std::string& op, std::vector<float> x, std::vector<float> y) {
    test::ModelBuilder m;
    m.input("x", {static_cast<std::int64_t>(x.size())}).node(op, {"x"}, {"y"}).output("y", {static_cast<std::int64_t>(y.size())});
    add_test(name, m, {Value::of(test::float_tensor("x", x))}, {Value::of(test::float_tensor("y", y))});
  }

  // Add: a pass, a wrong expectation (a mismatch on every rung) and an int64 Add the
  // accelerator leaves to the CPU; Sigmoid: the accelerator's compiler rejects it;
  // Abs and Relu pass everywhere; Identity only the CPU runs; and a download stub.
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
      add_test("test_add_int64", m, {Value::of(int64s("a", {3, 4}))}, {Value::of(int64s("b", {6, 8}))});
    }
    unary("test_sigmoid", "Sigmoid", {0, 0}, {0.5f, 0.5f});
    unary("test_abs", "Abs", {-1, 2}, {1, 2});
    unary("test_relu", "Relu", {-1, 2}, {0, 2});
    unary("test_identity", "Identity", {-1, 2}, {-1, 2});
    fs::create_directories(dir_ / "suite" / "real" / "test_big_model");
    std::ofstream(dir_ / "suite" / "real" / "test_big_model" / "data.json") << R"({"model_name": "big", "url": "https://example.invalid/big.tar.gz"})";
  }

  std::string conform(const std::string& args) {
    return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_SOFTWARE_GPU '" + test::cli_path().string() + "' conform --ort-dir " +
           test::runtime_dir("1.30.0").string() + " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --suite '" +
           (dir_ / "suite").string() + "' " + args;
  }
  std::string sim(const std::string& options = "") const { return "'" + (dir_ / "plugins" / "librung_sim_ep.so").string() + options + "'"; }

  fs::path dir_, node_;
};

TEST_F(ConformGridTest, TheFirstScreenShowsEachOperatorsCountsProblemsFirstAndTheCpuFirst) {
  build_suite();
  const fs::path json = dir_ / "conform.json", html = dir_ / "grid.html";
  // The rungs that cannot start and the accelerator are asked for before the CPU.
  // Rungs are named as a person writes them: "CUDA", "TensorRT" and "CPU" are the rungs cuda, tensorrt and cpu.
  // --report-only: the grid is the point here, and it holds mismatches.
  auto r = test::run_command(conform("--rung CUDA --rung TensorRT --rung " + sim(",option.reject_nodes=Sigmoid") + " --rung CPU --report-only --out-json '" +
                                     json.string() + "' --html '" + html.string() + "'"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // The terminal: the CPU's row first, the rungs that cannot start in one line, the operators as the grid groups them.
  std::smatch cpu_row, sim_row;
  ASSERT_TRUE(std::regex_search(r.out, cpu_row, std::regex(R"(\n  CPU · ONNX Runtime 1\.30\.0\s+6\s+1\s+0\s+0\s+0\s+0\s+0\n)"))) << r.out;
  // The accelerator's row, whatever its name: 3 pass, 1 mismatch, 2 not placed, 1 runtime refused.
  ASSERT_TRUE(std::regex_search(r.out, sim_row, std::regex(R"(\n  [^\n]+ · ONNX Runtime 1\.30\.0\s+3\s+1\s+2\s+1\s+0\s+0\s+0\n)"))) << r.out;
  EXPECT_LT(cpu_row.position(0), sim_row.position(0)) << r.out;
  // The rungs that cannot start: a line per reason (one for both when they share it), not rows of the table.
  const std::regex cuda_note(R"(\n  (CUDA|CUDA, TensorRT|TensorRT, CUDA): not available here — \S)"), trt_note(R"(\n  (TensorRT|CUDA, TensorRT|TensorRT, CUDA): not available here — \S)");
  EXPECT_TRUE(std::regex_search(r.out, cuda_note)) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, trt_note)) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("unavailable:")));
  EXPECT_THAT(r.out, Not(HasSubstr("CUDA · ONNX Runtime")));
  EXPECT_THAT(r.out, HasSubstr("6 operators: 2 with problems (Add, Sigmoid), 1 left to the CPU on some rung, 2 passing on every rung, 1 skipped"));

  // The record: the columns as asked, with the counts the terminal and the grid show.
  const auto rec = nlohmann::json::parse(test::read_file(json));
  EXPECT_EQ(test::schema_errors(test::schema_path("conform-record.schema.json"), json), "");
  ASSERT_EQ(rec["columns"].size(), 4u);
  EXPECT_TRUE(rec["columns"][0]["counts"].is_null());
  EXPECT_EQ(rec["columns"][3]["id"], "cpu@1.30.0") << "--rung CPU is the rung cpu";
  EXPECT_THAT(rec["columns"][0]["id"].get<std::string>(), ::testing::StartsWith("cuda@")) << "--rung CUDA is the rung cuda";
  const auto& cpu_counts = rec["columns"][3]["counts"];
  const auto& sim_counts = rec["columns"][2]["counts"];
  EXPECT_EQ(cpu_counts["pass"], 6);
  EXPECT_EQ(cpu_counts["mismatch"], 1);
  EXPECT_EQ(sim_counts["pass"], 3);
  EXPECT_EQ(sim_counts["runtime refused"], 1);
  EXPECT_EQ(sim_counts["not placed"], 2);

  // The page Chromium builds.
  auto dom = test::run_chromium("--dump-dom", html, dir_ / "chromium-1");
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  const std::string& d = dom.out;
  // Two columns, the CPU's first; the rungs that cannot start are a note above the grid, not columns.
  EXPECT_EQ(test::occurrences(d, "<div class=\"rung"), 2u);
  const auto first_rung = d.find("<div class=\"rung");
  EXPECT_EQ(d.substr(first_rung, 21), "<div class=\"rung cpu\"");
  EXPECT_EQ(test::occurrences(d, "n/a"), 0u);
  EXPECT_EQ(test::occurrences(d, "CUDA · "), 0u);
  EXPECT_EQ(test::occurrences(d, "TensorRT · "), 0u);
  const std::string note = section(d, "<div class=\"note\" id=\"unavailable\">", "</div>");
  EXPECT_TRUE(std::regex_search(note, std::regex(R"(<p>(CUDA|CUDA, TensorRT|TensorRT, CUDA): not available here — )"))) << note;
  EXPECT_TRUE(std::regex_search(note, std::regex(R"(<p>(TensorRT|CUDA, TensorRT|TensorRT, CUDA): not available here — )"))) << note;
  EXPECT_LT(d.find("id=\"unavailable\""), d.find("<div class=\"grid\">"));
  // The legend: each outcome once, with its meaning.
  const std::string legend = section(d, "<ul class=\"legend\">", "</ul>");
  EXPECT_EQ(test::occurrences(legend, "<li>"), 8u);
  for (const char* outcome : {"pass", "mismatch", "not placed", "runtime refused", "rung cannot feed it", "timed out", "crashed", "skipped"}) {
    EXPECT_EQ(test::occurrences(legend, std::string(">") + outcome + "<"), 1u) << outcome;
  }
  EXPECT_THAT(legend, HasSubstr(">crashed</span> the worker died"));
  EXPECT_EQ(test::occurrences(legend, "pass pass"), 0u);
  EXPECT_EQ(test::occurrences(legend, "crash crashed"), 0u);
  // A summary row per operator: problems first (shown), then left to the CPU, passing and skipped (each folded).
  EXPECT_EQ(test::occurrences(d, "<details class=\"op "), 6u);
  std::vector<std::pair<std::string, std::size_t>> rows;
  for (auto p = d.find("<details class=\"op "); p != std::string::npos; p = d.find("<details class=\"op ", p + 1)) {
    const auto name = d.find("<div class=\"name\" title=\"", p) + 25;
    rows.emplace_back(d.substr(name, d.find('"', name) - name), p);
  }
  ASSERT_EQ(rows.size(), 6u);
  const std::vector<std::string> order = {"Add", "Sigmoid", "Identity", "Abs", "Relu", "(not run)"};
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].first, order[i]) << i;
  const auto problems = d.find("<h2 class=\"problem\">"), not_placed = d.find("<details class=\"group notplaced\">"),
             passing = d.find("<details class=\"group pass\">"), skipped = d.find("<details class=\"group skipped\">");
  ASSERT_NE(problems, std::string::npos);
  ASSERT_NE(not_placed, std::string::npos);
  ASSERT_NE(passing, std::string::npos);
  ASSERT_NE(skipped, std::string::npos);
  EXPECT_LT(problems, rows[0].second);
  EXPECT_LT(rows[1].second, not_placed);
  EXPECT_LT(not_placed, rows[2].second);
  EXPECT_LT(rows[2].second, passing);
  EXPECT_LT(passing, rows[3].second);
  EXPECT_LT(rows[4].second, skipped);
  EXPECT_LT(skipped, rows[5].second);
  EXPECT_EQ(test::occurrences(d, "<details class=\"group pass\" open"), 0u) << "the passing operators are folded";
  // The Add row's counts: on the CPU 2 pass and 1 mismatch; on the accelerator 1 each of pass, mismatch, not placed.
  const std::string add = section(d, "<details class=\"op problem\">", "</summary>");
  EXPECT_TRUE(std::regex_search(add, std::regex(R"(<div class="counts">[^/]*>2 pass<.*>1 mismatch</span></div><div class="counts">)"))) << add;
  EXPECT_TRUE(std::regex_search(add, std::regex(R"(<div class="counts">.*>1 pass<.*>1 mismatch<.*>1 not placed</span></div>$)"))) << add;
  // Under each operator, its tests: one cell per test and shown rung.
  EXPECT_EQ(test::occurrences(d, "<div class=\"cell "), 8u * 2u);
  EXPECT_EQ(test::occurrences(d, "data-outcome=\"runtime refused\""), 1u);
  for (const char* fetch : {"src=", "href=", "url(", "@import", "<script"}) EXPECT_EQ(test::occurrences(test::read_file(html), fetch), 0u) << fetch;

  // The first screen, as drawn at 1400x900.
  const fs::path shot = dir_ / "grid.png";
  auto shoot = test::run_chromium("--screenshot='" + shot.string() + "' --window-size=1400,900 --hide-scrollbars", html, dir_ / "chromium-2");
  ASSERT_EQ(shoot.exit_code, 0) << shoot.err;
  const auto img = test::decode_png(shot);
  ASSERT_EQ(img.width, 1400);
  ASSERT_EQ(img.height, 900);
  // The problem band (#fdecea): the heading and the two problem operators' count rows, one band each, across the page.
  const auto problem_rows = bands(img, {0xfd, 0xec, 0xea});
  EXPECT_EQ(problem_rows.size(), 3u);
  for (const auto& [top, bottom] : problem_rows) EXPECT_GE(bottom - top, 12) << top;
  // The chips of those rows: a mismatch (#c62828) and a refusal (#ef6c00) drawn inside the bands too.
  auto chip_in_band = [&](Rgb c) {
    for (const auto& [top, bottom] : problem_rows) {
      for (int y = top; y <= bottom; ++y) {
        for (int x = 340; x < img.width; ++x) {
          if (is(img, x, y, c)) return true;
        }
      }
    }
    return false;
  };
  EXPECT_TRUE(chip_in_band({0xc6, 0x28, 0x28})) << "mismatch";
  EXPECT_TRUE(chip_in_band({0xef, 0x6c, 0x00})) << "runtime refused";
  // The folded groups' bands below: the operators left to the CPU, passing and skipped.
  EXPECT_EQ(bands(img, {0xed, 0xf5, 0xe9}).size(), 1u) << "the folded passing group";
  EXPECT_EQ(bands(img, {0xf5, 0xf5, 0xf5}).size(), 1u) << "the folded skipped group";
  // The CPU's column (#d6e6f5 header) right after the operators' and wholly on screen, the accelerator's after it.
  const auto cpu = x_extent(img, {0xd6, 0xe6, 0xf5});
  ASSERT_GE(cpu.first, 0) << "the CPU's column is not drawn";
  EXPECT_LT(cpu.first, 420);
  EXPECT_GT(cpu.second - cpu.first, 300);
  EXPECT_LT(cpu.second, 1400 - 300) << "room for the accelerator's column to its right";
}

TEST_F(ConformGridTest, JsonPrintsTheRecordAloneOnStdoutAndOutJsonWritesTheSameDocument) {
  build_suite();
  const fs::path json = dir_ / "record.json";
  auto r = test::run_command(conform("--rung cpu --filter 'test_(abs|relu)$' --details --json --out-json '" + json.string() + "'"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto printed = nlohmann::json::parse(r.out);  // the whole of stdout: the record, and nothing else
  EXPECT_EQ(printed["schema"], "rung-conform-record");
  EXPECT_EQ(printed["tests"].size(), 2u);
  EXPECT_EQ(printed["columns"][0]["counts"]["pass"], 2);
  EXPECT_EQ(nlohmann::json::parse(test::read_file(json)), printed) << "one document, in both places";
  EXPECT_THAT(r.out, Not(HasSubstr("operators:")));
  EXPECT_THAT(r.err, Not(HasSubstr("operators:")));

  auto dash = test::run_command(conform("--rung cpu --filter 'test_abs$' --out-json -"));
  ASSERT_EQ(dash.exit_code, 0) << dash.out << dash.err;
  EXPECT_EQ(nlohmann::json::parse(dash.out)["tests"].size(), 1u);

  auto text = test::run_command(conform("--rung cpu --filter 'test_abs$' --out-json '" + json.string() + "'"));
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_THAT(text.out, HasSubstr("1 operator: 0 with problems, 0 left to the CPU on some rung, 1 passing on every rung, 0 skipped"));
  EXPECT_EQ(nlohmann::json::parse(test::read_file(json))["tests"].size(), 1u);

  // The old spelling is gone: --json takes no file.
  auto old = test::run_command(conform("--rung cpu --json '" + (dir_ / "old.json").string() + "'"));
  EXPECT_EQ(old.exit_code, 2) << old.out << old.err;
  EXPECT_FALSE(fs::exists(dir_ / "old.json"));
}

}  // namespace
}  // namespace rung
