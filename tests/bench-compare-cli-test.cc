// `rung bench compare A B` as CI runs it: real records from `rung bench` on small
// models (A's spread pinned around its measured medians, so that no verdict
// rests on this machine's load), B made from A by scaling every recorded time,
// a planted 20% regression flagged with exit 1 and a 2% change not;
// --json on stdout alone, --html, directories with models and rungs on one side
// only, damaged or missing records and an output naming an input refused with exit 2.
// And `rung bench MODEL` still benches now that bench has a `compare` subcommand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "model_builder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using test::q;

void write_text(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

json read_json(const fs::path& file) { return json::parse(test::read_file(file)); }

// Every time a row records, times `factor`: the latency summary (not its count),
// per-round medians, the first inference and any list of every run's time.
void scale_row(json& row, double factor) {
  if (!row["ok"].get<bool>()) return;
  for (auto it = row["latency_ms"].begin(); it != row["latency_ms"].end(); ++it) {
    if (it.key() == "count") continue;
    if (it->is_number()) *it = it->get<double>() * factor;
    if (it->is_array()) for (auto& x : *it) x = x.get<double>() * factor;
  }
  for (auto it = row.begin(); it != row.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() > 3 && k.compare(k.size() - 3, 3, "_ms") == 0) {
      if (it->is_number()) *it = it->get<double>() * factor;
      if (it->is_array()) for (auto& x : *it) if (x.is_number()) x = x.get<double>() * factor;
    }
  }
}

json scaled(json record, double factor) {
  for (auto& m : record["measurements"]) for (auto& r : m["rows"]) scale_row(r, factor);
  return record;
}

class BenchCompareCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(test::make_temp_dir("rung-bench-compare-cli"));
    test::make_plugin_dir(*dir_);
    test::ModelBuilder a;
    a.input("x", {1, 32, 32}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 32, 32});
    a.save(*dir_ / "tiny.onnx");
    test::ModelBuilder b;
    b.input("x", {1, 8}).node("Mul", {"x", "x"}, {"y"}).output("y", {1, 8});
    b.save(*dir_ / "square.onnx");
    // Record A: a real bench of the tiny model on the CPU and the simulated accelerator, many runs (each is microseconds).
    bench_ok_ = bench_record("tiny=" + (*dir_ / "tiny.onnx").string() + " --runs 2000 --rung rung_sim_ep", *dir_ / "a" / "tiny.json") &&
                bench_ok_ && bench_record("square=" + (*dir_ / "square.onnx").string() + " --runs 2000 --rung cpu", *dir_ / "square.json");
    if (bench_ok_) pin_spread(*dir_ / "a" / "tiny.json");
  }
  // A's summary spread pinned around its own measured median (p90 1.3x it, p99 1.6x), for the
  // comparisons that fall back on the summary (a record without its runs): those are judged
  // against a known spread, never against how loaded this machine was while it ran (a preempted
  // microsecond run can put p90 at 3x p50, and then a 20% change is rightly unclear). Judged
  // from the runs, a scaled copy of the same runs is a known change whatever their spread.
  static void pin_spread(const fs::path& file) {
    json record = read_json(file);
    for (auto& m : record["measurements"]) {
      for (auto& r : m["rows"]) {
        if (!r["ok"].get<bool>()) continue;
        json& l = r["latency_ms"];
        const double p50 = l["p50"].get<double>();
        l["min"] = std::min(l["min"].get<double>(), p50);
        l["mean"] = 1.05 * p50;
        l["p90"] = 1.3 * p50;
        l["p99"] = 1.6 * p50;
        l["max"] = std::max(l["max"].get<double>(), 1.6 * p50);
        l["stddev"] = 0.25 * p50;
      }
    }
    write_text(file, record.dump(2));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override { ASSERT_TRUE(bench_ok_) << bench_log_; }

  static std::string rung_bench(const std::string& args) {
    return "env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR '" + test::cli_path().string() + "' bench --ort-dir " + test::runtime_dir("1.30.0").string() +
           " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --plugin-dir " + (*dir_ / "plugins").string() +
           " --warmup 1 " + args;
  }
  // The record option is being renamed from --json FILE to --out-json FILE: either serves.
  static bool bench_record(const std::string& args, const fs::path& file) {
    fs::create_directories(file.parent_path());
    auto r = test::run_command(rung_bench(args + " --out-json " + q(file)));
    if (r.exit_code != 0 || !fs::exists(file)) r = test::run_command(rung_bench(args + " --json " + q(file)));
    bench_log_ += r.out + r.err;
    return r.exit_code == 0 && fs::exists(file);
  }
  static test::CommandResult compare(const std::string& args) {
    return test::run_command("'" + test::cli_path().string() + "' bench compare " + args);
  }
  static fs::path record_a() { return *dir_ / "a" / "tiny.json"; }
  // B: A with every time scaled, written under `name`.
  static fs::path make_b(const std::string& name, double factor) {
    const fs::path file = *dir_ / name / "tiny.json";
    write_text(file, scaled(read_json(record_a()), factor).dump(2));
    return file;
  }
  static const json* row_of(const json& doc, const std::string& model, const std::string& rung) {
    for (const auto& r : doc["rows"]) if (r["model"] == model && r["rung"] == rung) return &r;
    return nullptr;
  }

  static fs::path* dir_;
  static bool bench_ok_;
  static std::string bench_log_;
};
fs::path* BenchCompareCliTest::dir_ = nullptr;
bool BenchCompareCliTest::bench_ok_ = true;
std::string BenchCompareCliTest::bench_log_;

TEST_F(BenchCompareCliTest, APlanted20PercentRegressionIsFlaggedAnd2PercentIsNot) {
  const fs::path b20 = make_b("b20", 1.20), b02 = make_b("b02", 1.02);

  auto r = compare(q(record_a()) + " " + q(b20));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("REGRESSION"));
  EXPECT_THAT(r.out, HasSubstr("2 regressions, 0 improvements"));
  EXPECT_THAT(r.err, HasSubstr("2 regressions beyond 10%: tiny f32 cpu (1.2×), tiny f32 rung_sim_ep (1.2×)"));

  auto j = compare(q(record_a()) + " " + q(b20) + " --json");
  EXPECT_EQ(j.exit_code, 1);
  auto doc = json::parse(j.out);
  for (const char* rung : {"cpu", "rung_sim_ep"}) {
    const json* row = row_of(doc, "tiny", rung);
    ASSERT_NE(row, nullptr) << rung;
    EXPECT_EQ((*row)["verdict"], "regression") << row->dump();
    EXPECT_NEAR((*row)["ratio"].get<double>(), 1.20, 1e-9);
    EXPECT_GT((*row)["low"].get<double>(), 1.10);
    EXPECT_GE((*row)["high"].get<double>(), 1.20);
  }

  r = compare(q(record_a()) + " " + q(b02));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("REGRESSION")));
  doc = json::parse(compare(q(record_a()) + " " + q(b02) + " --json").out);
  for (const char* rung : {"cpu", "rung_sim_ep"}) {
    const json* row = row_of(doc, "tiny", rung);
    ASSERT_NE(row, nullptr);
    EXPECT_NE((*row)["verdict"], "regression") << row->dump();
    EXPECT_NEAR((*row)["ratio"].get<double>(), 1.02, 1e-9);
    EXPECT_LE((*row)["low"].get<double>(), 1.02);
    EXPECT_GE((*row)["high"].get<double>(), 1.02);
  }

  // The other way round, B faster: an improvement, exit 0.
  r = compare(q(b20) + " " + q(record_a()) + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ((*row_of(json::parse(r.out), "tiny", "cpu"))["verdict"], "improvement");
  // A threshold above the change: no regression.
  r = compare(q(record_a()) + " " + q(b20) + " --threshold 0.25 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE((*row_of(json::parse(r.out), "tiny", "cpu"))["verdict"], "regression");
}

// A record keeps every timed run, in run order, and bench compare judges from the
// runs themselves (a bootstrap of the ratio of medians), not from the summary.
TEST_F(BenchCompareCliTest, RecordsKeepEveryRunAndCompareJudgesFromThem) {
  const json a = read_json(record_a());
  int rows = 0;
  for (const auto& m : a["measurements"]) {
    for (const auto& r : m["rows"]) {
      if (!r["ok"].get<bool>()) {
        EXPECT_TRUE(r["run_ms"].is_null()) << r.dump();
        continue;
      }
      ++rows;
      ASSERT_TRUE(r["run_ms"].is_array()) << r.dump();
      std::vector<double> runs = r["run_ms"].get<std::vector<double>>();
      EXPECT_EQ(static_cast<int>(runs.size()), r["latency_ms"]["count"].get<int>()) << "every run of " << r["rung"];
      EXPECT_EQ(static_cast<int>(runs.size()), 2000);
      for (double ms : runs) EXPECT_GE(ms, 0);
      std::sort(runs.begin(), runs.end());
      const double median = (runs[999] + runs[1000]) / 2;
      EXPECT_NEAR(median, r["latency_ms"]["p50"].get<double>(), 1e-4 + 1e-3 * median) << "the runs are the ones the summary was made from";
    }
  }
  EXPECT_EQ(rows, 2);

  // A planted ×1.5 slowdown of these real runs: a regression found from the runs, exit 1.
  auto r = compare(q(record_a()) + " " + q(make_b("b15", 1.5)) + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  json doc = json::parse(r.out);
  for (const char* rung : {"cpu", "rung_sim_ep"}) {
    const json* row = row_of(doc, "tiny", rung);
    ASSERT_NE(row, nullptr) << rung;
    EXPECT_EQ((*row)["method"], "bootstrap") << row->dump();
    EXPECT_EQ((*row)["verdict"], "regression") << row->dump();
  }

  // The same runs in another order: the same build, never called slower.
  json shuffled = a;
  for (auto& m : shuffled["measurements"]) {
    for (auto& row : m["rows"]) {
      if (row["run_ms"].is_array()) std::reverse(row["run_ms"].begin(), row["run_ms"].end());
    }
  }
  write_text(*dir_ / "reordered" / "tiny.json", shuffled.dump(2));
  r = compare(q(record_a()) + " " + q(*dir_ / "reordered" / "tiny.json") + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  doc = json::parse(r.out);
  for (const char* rung : {"cpu", "rung_sim_ep"}) {
    const json* row = row_of(doc, "tiny", rung);
    ASSERT_NE(row, nullptr) << rung;
    EXPECT_EQ((*row)["method"], "bootstrap");
    EXPECT_EQ((*row)["verdict"], "same") << row->dump();
  }

  // A record written before rung kept the runs is still compared, from its summary.
  json old = a;
  for (auto& m : old["measurements"]) {
    for (auto& row : m["rows"]) row.erase("run_ms");
  }
  write_text(*dir_ / "old" / "tiny.json", old.dump(2));
  r = compare(q(*dir_ / "old" / "tiny.json") + " " + q(make_b("b15", 1.5)) + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  doc = json::parse(r.out);
  ASSERT_NE(row_of(doc, "tiny", "cpu"), nullptr);
  EXPECT_EQ((*row_of(doc, "tiny", "cpu"))["method"], "summary");
}

// Past 2 000 runs a row keeps 2 000 of them, evenly spaced in run order; the count says how many ran.
TEST_F(BenchCompareCliTest, ARowKeepsAtMostTwoThousandRuns) {
  const fs::path file = *dir_ / "many" / "square.json";
  ASSERT_TRUE(bench_record("square=" + (*dir_ / "square.onnx").string() + " --runs 2001 --rung cpu", file)) << bench_log_;
  const json record = read_json(file);
  const json& row = record["measurements"].back()["rows"][0];
  EXPECT_EQ(row["latency_ms"]["count"], 2001);
  EXPECT_EQ(row["run_ms"].size(), 2000u);
  const fs::path exact = *dir_ / "exact" / "square.json";
  ASSERT_TRUE(bench_record("square=" + (*dir_ / "square.onnx").string() + " --runs 2000 --rung cpu", exact)) << bench_log_;
  EXPECT_EQ(read_json(exact)["measurements"].back()["rows"][0]["run_ms"].size(), 2000u);
}

TEST_F(BenchCompareCliTest, JsonOnStdoutParsesAndNothingElseIsThere) {
  const fs::path b = make_b("bjson", 1.20);
  const fs::path out = *dir_ / "cmp-out.json";
  auto r = test::run_command("('" + test::cli_path().string() + "' bench compare " + q(record_a()) + " " + q(b) + " --json --out-json " + q(out) +
                             " 2>/dev/null | /usr/bin/python3 -m json.tool > /dev/null && echo parsed)");
  EXPECT_EQ(r.out, "parsed\n") << r.err;
  auto j = compare(q(record_a()) + " " + q(b) + " --json");
  EXPECT_EQ(j.out.front(), '{');
  auto doc = json::parse(j.out);
  EXPECT_EQ(doc["schema"], "rung-bench-compare");
  EXPECT_EQ(doc["threshold"], 0.10);
  EXPECT_EQ(doc["counts"]["regression"], 2);
  EXPECT_EQ(doc["exit_code"], 1);
  EXPECT_EQ(read_json(out), doc);
  // Without --json: the table, and no JSON on stdout.
  auto t = compare(q(record_a()) + " " + q(b));
  EXPECT_THAT(t.out, HasSubstr("B/A"));
  EXPECT_THAT(t.out, Not(HasSubstr("\"schema\"")));
}

TEST_F(BenchCompareCliTest, ModelsAndRungsOnOneSideOnlyAreListed) {
  // A: the tiny model (CPU, simulated accelerator). B: tiny without the accelerator's row, and the square model.
  json b = scaled(read_json(record_a()), 1.0);
  auto& rows = b["measurements"].back()["rows"];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i]["rung"] == "rung_sim_ep") rows.erase(i);
  }
  write_text(*dir_ / "bdir" / "tiny.json", b.dump(2));
  fs::copy_file(*dir_ / "square.json", *dir_ / "bdir" / "square.json", fs::copy_options::overwrite_existing);
  auto r = compare(q(*dir_ / "a") + " " + q(*dir_ / "bdir") + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::parse(r.out);
  EXPECT_EQ((*row_of(doc, "tiny", "rung_sim_ep"))["verdict"], "only in A");
  EXPECT_EQ((*row_of(doc, "square", "cpu"))["verdict"], "only in B");
  EXPECT_NE((*row_of(doc, "tiny", "cpu"))["verdict"], "regression");
  auto t = compare(q(*dir_ / "a") + " " + q(*dir_ / "bdir"));
  EXPECT_THAT(t.out, HasSubstr("only in A"));
  EXPECT_THAT(t.out, HasSubstr("only in B"));
  EXPECT_THAT(t.out, HasSubstr("1 only in A, 1 only in B"));
}

TEST_F(BenchCompareCliTest, AnotherMachineAndBuildIsSaidNotRefused) {
  json b = scaled(read_json(record_a()), 1.02);
  auto& m = b["measurements"].back();
  m["device"] = "another machine: NVIDIA H200";
  m["env"]["hostname"] = "gpu-box";
  m["env"]["hardware_identity"] = "another machine: NVIDIA H200";
  m["env"]["runtime"]["version"] = "1.29.0";
  write_text(*dir_ / "bother" / "tiny.json", b.dump(2));
  auto r = compare(q(record_a()) + " " + q(*dir_ / "bother" / "tiny.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("note: A and B were measured on different machines: A on "));
  EXPECT_THAT(r.out, HasSubstr("B on another machine: NVIDIA H200 (host gpu-box)"));
  EXPECT_THAT(r.out, HasSubstr("note: A and B ran on different ONNX Runtime builds: A 1.30.0"));
  // The same machine and build: no such note.
  auto same = compare(q(record_a()) + " " + q(make_b("bsame", 1.02)));
  EXPECT_THAT(same.out, Not(HasSubstr("different machines")));
  EXPECT_THAT(same.out, Not(HasSubstr("different ONNX Runtime builds")));
}

TEST_F(BenchCompareCliTest, HtmlPageHasEveryModelAndMarksTheRegression) {
  const fs::path bdir = *dir_ / "bhtml";
  make_b("bhtml", 1.20);
  fs::copy_file(*dir_ / "square.json", bdir / "square.json", fs::copy_options::overwrite_existing);
  fs::create_directories(*dir_ / "ahtml");
  fs::copy_file(record_a(), *dir_ / "ahtml" / "tiny.json", fs::copy_options::overwrite_existing);
  fs::copy_file(*dir_ / "square.json", *dir_ / "ahtml" / "square.json", fs::copy_options::overwrite_existing);
  const fs::path page = *dir_ / "compare.html";
  auto r = compare(q(*dir_ / "ahtml") + " " + q(bdir) + " --html " + q(page));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("report: " + page.string()));
  const std::string html = test::read_file(page);
  EXPECT_THAT(html, HasSubstr("<td class=\"text\">tiny</td>"));
  EXPECT_THAT(html, HasSubstr("<td class=\"text\">square</td>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"row regression\">"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"row same\">"));  // square against itself
  EXPECT_THAT(html, HasSubstr("class=\"interval regression\""));
  for (const char* fetch : {"src=", "href=", "url(", "@import", "<script"}) EXPECT_THAT(html, Not(HasSubstr(fetch))) << fetch;
}

TEST_F(BenchCompareCliTest, BadInputIsExit2NamingTheFile) {
  const fs::path b = make_b("bbad", 1.0);
  // A damaged record: cut in half.
  const std::string text = test::read_file(b);
  write_text(*dir_ / "bad" / "cut.json", text.substr(0, text.size() / 2));
  auto r = compare(q(record_a()) + " " + q(*dir_ / "bad" / "cut.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr((*dir_ / "bad" / "cut.json").string() + ": not valid JSON"));
  EXPECT_EQ(r.out, "");
  // A record whose row lost its latency.
  json d = read_json(b);
  d["measurements"][0]["rows"][0]["latency_ms"]["count"] = "many";
  write_text(*dir_ / "bad" / "damaged.json", d.dump());
  r = compare(q(*dir_ / "bad" / "damaged.json") + " " + q(b));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr((*dir_ / "bad" / "damaged.json").string() + ": measurements[0].rows[0].latency_ms.count is not a whole number"));
  // JSON, but not a record.
  write_text(*dir_ / "bad" / "other.json", R"({"schema": "rung-conform-record"})");
  r = compare(q(record_a()) + " " + q(*dir_ / "bad" / "other.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("other.json: not a rung bench record"));
  // Missing.
  r = compare(q(*dir_ / "nope.json") + " " + q(b));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr((*dir_ / "nope.json").string() + ": does not exist"));
  // A threshold out of its range.
  r = compare(q(record_a()) + " " + q(b) + " --threshold 1.5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--threshold"));
  // One record only, or three.
  r = compare(q(record_a()));
  EXPECT_EQ(r.exit_code, 2);
  r = compare(q(record_a()) + " " + q(b) + " " + q(b));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bench compare takes two records, A and B; also given: " + b.string()));
  EXPECT_EQ(r.out, "");
}

TEST_F(BenchCompareCliTest, AnOutputNamingAnInputIsRefused) {
  const fs::path b = make_b("bout", 1.20);
  const std::string before = test::read_file(record_a());
  auto r = compare(q(record_a()) + " " + q(b) + " --html " + q(record_a()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--html"));
  EXPECT_THAT(r.err, HasSubstr(record_a().string()));
  EXPECT_EQ(test::read_file(record_a()), before);
  r = compare(q(record_a()) + " " + q(b) + " --out-json " + q(b));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--out-json"));
  EXPECT_EQ(read_json(b), scaled(read_json(record_a()), 1.20));
  // Nothing was compared: no table on stdout.
  EXPECT_THAT(r.out, Not(HasSubstr("B/A")));
}

TEST_F(BenchCompareCliTest, BenchStillTakesModelsBesideTheCompareSubcommand) {
  // `rung bench MODEL` benches (the record A above came that way too) ...
  auto r = test::run_command(rung_bench((*dir_ / "square.onnx").string() + " --runs 3 --rung cpu"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("square (square.onnx, f32"));
  EXPECT_THAT(r.out, HasSubstr("CPU (floor)"));
  // ... `rung bench` alone still asks for a model ...
  r = test::run_command("'" + test::cli_path().string() + "' bench");
  EXPECT_EQ(r.exit_code, 2);
  // ... and `rung bench compare A B` compares, measuring nothing.
  r = compare(q(*dir_ / "square.json") + " " + q(*dir_ / "square.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("B/A"));
  EXPECT_THAT(r.out, Not(HasSubstr("CPU (floor)")));
  r = compare("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--threshold"));
}

}  // namespace
}  // namespace rung
