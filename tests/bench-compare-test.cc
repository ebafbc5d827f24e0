// The comparison of two bench records (rung/bench_compare.h): the verdict at the
// threshold's edges, the unpaired intervals on synthetic runs of a known ratio,
// the reading of records (every run's time or only the summary, rows and models
// on one side, several measurements, other machines) and damaged records refused
// naming the file.
#include "rung/bench_compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/sample_stats.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

const double kUp = std::nextafter(1.1, 2.0), kDown = std::nextafter(0.9, 0.0);

TEST(CompareVerdict, RegressionOnlyWhenTheWholeIntervalIsAboveOnePlusThreshold) {
  EXPECT_EQ(compare_verdict(kUp, 1.3, 0.10), CompareVerdict::kRegression);
  EXPECT_EQ(compare_verdict(1.1, 1.3, 0.10), CompareVerdict::kUnclear);  // touching the edge is not wholly above
  EXPECT_EQ(compare_verdict(1.05, 1.3, 0.10), CompareVerdict::kUnclear);
  EXPECT_EQ(compare_verdict(kUp, kUp, 0.10), CompareVerdict::kRegression);
}

TEST(CompareVerdict, ImprovementOnlyWhenTheWholeIntervalIsBelowOneMinusThreshold) {
  EXPECT_EQ(compare_verdict(0.5, kDown, 0.10), CompareVerdict::kImprovement);
  EXPECT_EQ(compare_verdict(0.5, 0.9, 0.10), CompareVerdict::kUnclear);
  EXPECT_EQ(compare_verdict(0.5, 0.95, 0.10), CompareVerdict::kUnclear);
}

TEST(CompareVerdict, SameWhenTheIntervalLiesWithinTheBandEdgesIncluded) {
  EXPECT_EQ(compare_verdict(0.9, 1.1, 0.10), CompareVerdict::kSame);
  EXPECT_EQ(compare_verdict(0.99, 1.01, 0.10), CompareVerdict::kSame);
  EXPECT_EQ(compare_verdict(kDown, 1.1, 0.10), CompareVerdict::kUnclear);
  EXPECT_EQ(compare_verdict(0.9, kUp, 0.10), CompareVerdict::kUnclear);
  EXPECT_EQ(compare_verdict(0.8, 1.3, 0.10), CompareVerdict::kUnclear);  // wider than the band on both sides
  // Threshold 0: any interval wholly above 1 is a regression.
  EXPECT_EQ(compare_verdict(std::nextafter(1.0, 2.0), 1.01, 0.0), CompareVerdict::kRegression);
  EXPECT_EQ(compare_verdict(1.0, 1.0, 0.0), CompareVerdict::kSame);
}

TEST(CompareVerdict, Names) {
  EXPECT_STREQ(compare_verdict_name(CompareVerdict::kRegression), "regression");
  EXPECT_STREQ(compare_verdict_name(CompareVerdict::kOnlyInA), "only in A");
  EXPECT_STREQ(compare_verdict_name(CompareVerdict::kOnlyInB), "only in B");
}

// Log-normal run times around `median_ms` with spread `sigma`, and a few slow outliers.
std::vector<double> runs(std::size_t n, double median_ms, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, sigma);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(median_ms * std::exp(z(rng)) * (u(rng) < 0.03 ? 5.0 : 1.0));
  return out;
}

TEST(BootstrapRatio, OrderedAndCoversTheTrueRatioOnUnpairedRuns) {
  int covered = 0;
  const int trials = 60;
  for (int t = 0; t < trials; ++t) {
    // Different sizes on each side: nothing pairs them.
    auto a = runs(40, 10.0, 0.15, 1000 + t);
    auto b = runs(55, 12.0, 0.15, 5000 + t);
    auto iv = bootstrap_ratio_interval(a, b, 0.95, 1000, 7);
    ASSERT_TRUE(iv);
    EXPECT_EQ(iv->method, "bootstrap");
    EXPECT_LT(iv->low, iv->high);
    EXPECT_LE(iv->low, iv->ratio);
    EXPECT_GE(iv->high, iv->ratio);
    EXPECT_DOUBLE_EQ(iv->ratio, median(b) / median(a));
    if (iv->low <= 1.2 && 1.2 <= iv->high) ++covered;
  }
  // 95% nominal; a percentile bootstrap of medians on ~50 runs covers somewhat less. Far from 0 or 100%.
  EXPECT_GE(covered, 50) << covered << " of " << trials;
  EXPECT_LT(covered, trials + 1);
}

TEST(BootstrapRatio, NarrowsWithMoreRunsAndIsDeterministic) {
  auto a1 = runs(30, 10.0, 0.2, 1), b1 = runs(30, 10.0, 0.2, 2);
  auto a2 = runs(3000, 10.0, 0.2, 3), b2 = runs(3000, 10.0, 0.2, 4);
  auto small = bootstrap_ratio_interval(a1, b1, 0.95, 2000, 9);
  auto large = bootstrap_ratio_interval(a2, b2, 0.95, 2000, 9);
  ASSERT_TRUE(small && large);
  EXPECT_LT(large->high - large->low, (small->high - small->low) / 4);
  EXPECT_LE(large->low, 1.0);
  EXPECT_GE(large->high, 1.0);
  auto again = bootstrap_ratio_interval(a1, b1, 0.95, 2000, 9);
  EXPECT_EQ(again->low, small->low);
  EXPECT_EQ(again->high, small->high);
  // A higher confidence, a wider interval.
  auto wide = bootstrap_ratio_interval(a1, b1, 0.99, 2000, 9);
  EXPECT_LE(wide->low, small->low);
  EXPECT_GE(wide->high, small->high);
}

TEST(BootstrapRatio, TooFewRunsGiveNoInterval) {
  std::vector<double> four = {1, 2, 3, 4}, five = {1, 2, 3, 4, 5};
  EXPECT_FALSE(bootstrap_ratio_interval(four, five, 0.95, 1000, 1));
  EXPECT_TRUE(bootstrap_ratio_interval(five, five, 0.95, 1000, 1));
  EXPECT_FALSE(bootstrap_ratio_interval(std::vector<double>(5, 0.0), five, 0.95, 1000, 1));  // a zero median
}

TEST(BootstrapRatio, ThinsVeryLongRunsInsteadOfTakingForever) {
  auto a = runs(200'000, 1.0, 0.1, 11), b = runs(200'000, 1.3, 0.1, 12);
  auto iv = bootstrap_ratio_interval(a, b, 0.95, 500, 3);
  ASSERT_TRUE(iv);
  EXPECT_LE(iv->low, 1.3);
  EXPECT_GE(iv->high, 1.3);
  EXPECT_GT(iv->low, 1.25);
}

TimingSummary summary_of(const std::vector<double>& v) {
  auto s = summarize(v);
  return {s.count, s.p50, s.p90, s.stddev};
}

TEST(SummaryRatio, OrderedAndCoversTheTrueRatio) {
  int covered = 0;
  const int trials = 60;
  for (int t = 0; t < trials; ++t) {
    auto a = runs(100, 10.0, 0.15, 200 + t), b = runs(80, 11.0, 0.15, 900 + t);
    auto iv = ratio_from_summaries(summary_of(a), summary_of(b), 0.95);
    ASSERT_TRUE(iv);
    EXPECT_EQ(iv->method, "summary");
    EXPECT_LT(iv->low, iv->ratio);
    EXPECT_GT(iv->high, iv->ratio);
    if (iv->low <= 1.1 && 1.1 <= iv->high) ++covered;
  }
  EXPECT_GE(covered, 50) << covered << " of " << trials;
}

TEST(SummaryRatio, ScaledSummaryIsCentredOnTheScaleAndOutliersPastP90DoNotWidenIt) {
  TimingSummary a{300, 10.0, 12.0, 1.5};
  TimingSummary b{300, 12.0, 14.4, 1.8};
  auto iv = ratio_from_summaries(a, b, 0.95);
  ASSERT_TRUE(iv);
  EXPECT_DOUBLE_EQ(iv->ratio, 1.2);
  EXPECT_NEAR(iv->low * iv->high, 1.44, 1e-9);  // symmetric on the log scale
  TimingSummary noisy = a;
  noisy.stddev = 100;  // a few huge outliers: the stddev explodes, p90 does not move
  auto iv2 = ratio_from_summaries(noisy, b, 0.95);
  EXPECT_DOUBLE_EQ(iv2->low, iv->low);
  EXPECT_FALSE(ratio_from_summaries(TimingSummary{1, 10, 12, 1}, b, 0.95));
  EXPECT_FALSE(ratio_from_summaries(TimingSummary{30, 0, 0, 0}, b, 0.95));
}

// ---- records ----

json row(const std::string& rung, const std::vector<double>& times, bool with_runs) {
  auto s = summarize(times);
  json r = {{"rung", rung},
            {"rung_display", rung == "cpu" ? "CPU" : rung},
            {"provider", "x"},
            {"form", "f32"},
            {"model_id", "m"},
            {"ok", true},
            {"failure_class", nullptr},
            {"failure_reason", nullptr},
            {"output_match", {{"verdict", rung == "cpu" ? "reference" : "match"}}},
            {"latency_ms", {{"count", s.count}, {"min", s.min}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}, {"mean", s.mean}, {"stddev", s.stddev}}},
            {"cv", s.cv}};
  if (with_runs) r["run_ms"] = times;
  return r;
}

json failed_row(const std::string& rung) {
  return {{"rung", rung}, {"form", "f32"}, {"ok", false}, {"failure_class", "build_failed"}, {"failure_reason", "no adapter"},
          {"output_match", {{"verdict", "not compared"}}}, {"latency_ms", nullptr}};
}

json record(const std::string& model, const std::vector<json>& rows, const std::string& host = "box", const std::string& ort = "1.30.0") {
  json env = {{"hostname", host}, {"os", "Linux"}, {"cpu", "EPYC"}, {"logical_cpus", 2}, {"hardware_identity", "cpu EPYC"},
              {"runtime", {{"name", "onnxruntime"}, {"version", ort}, {"library", "/x/libonnxruntime.so"}, {"api_version", 23}}}, {"threads", 0}};
  return {{"schema", "rung-bench-record"},
          {"schema_version", 2},
          {"model", {{"name", model}, {"file", model + ".onnx"}, {"sha256", std::string(64, 'a')}, {"stable_sha256", std::string(64, 'b')}, {"form", "f32"}}},
          {"measurements",
           json::array({{{"device", "cpu EPYC"},
                         {"env", env},
                         {"provenance", {{"kind", "measured"}, {"date", "2026-12-02T05:00:00Z"}, {"command", "rung bench"}, {"tool", "rung"}}},
                         {"settings", {{"warmup", 3}, {"runs", 200}, {"rounds", 1}, {"inputs", "random"}}},
                         {"rows", rows},
                         {"warnings", json::array()}}})}};
}

class CompareRecords : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-bench-compare"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel, std::ios::binary) << text;
    return dir_ / rel;
  }
  fs::path write(const std::string& rel, const json& j) { return write(rel, j.dump(2)); }
  static const CompareRow* find(const BenchComparison& c, const std::string& model, const std::string& rung) {
    for (const auto& r : c.rows) if (r.model == model && r.rung == rung) return &r;
    return nullptr;
  }
  fs::path dir_;
};

TEST_F(CompareRecords, EveryRunsTimeIsBootstrappedAndOnlySummariesAreApproximated) {
  auto a_cpu = runs(200, 5.0, 0.1, 1), a_sim = runs(200, 8.0, 0.1, 2);
  auto b_cpu = runs(200, 6.0, 0.1, 3), b_sim = runs(200, 8.0, 0.1, 4);
  auto a = write("a.json", record("det", {row("cpu", a_cpu, true), row("sim", a_sim, false)}));
  auto b = write("b.json", record("det", {row("cpu", b_cpu, true), row("sim", b_sim, true)}));
  auto c = compare_bench_records(a, b);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->rows.size(), 2u);
  const CompareRow* cpu = find(*c, "det", "cpu");
  ASSERT_TRUE(cpu && cpu->interval);
  EXPECT_EQ(cpu->interval->method, "bootstrap");
  EXPECT_EQ(cpu->verdict, CompareVerdict::kRegression);  // 1.2x on 200 runs of 10% spread
  EXPECT_EQ(cpu->rung_display, "CPU");
  EXPECT_TRUE(cpu->a->every_run);
  EXPECT_EQ(cpu->a->runs, 200);
  const CompareRow* sim = find(*c, "det", "sim");
  ASSERT_TRUE(sim && sim->interval);
  EXPECT_EQ(sim->interval->method, "summary");  // A holds only the summary
  EXPECT_EQ(sim->verdict, CompareVerdict::kSame);
  EXPECT_EQ(c->count(CompareVerdict::kRegression), 1);
  EXPECT_TRUE(c->notes.empty()) << c->notes.front();
}

TEST_F(CompareRecords, RowsAndModelsOnOneSideOnlyAndFailedRows) {
  auto t = runs(50, 5.0, 0.1, 1);
  auto a = write("a/det.json", record("det", {row("cpu", t, true), row("sim", t, true), failed_row("webgpu")}));
  write("a/vad.json", record("vad", {row("cpu", t, true)}));
  auto b = write("b/det.json", record("det", {row("cpu", t, true), row("cuda", t, true), row("webgpu", t, true)}));
  write("b/rec.json", record("rec", {row("cpu", t, true)}));
  auto c = compare_bench_records(dir_ / "a", dir_ / "b");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->a.records.size(), 2u);
  EXPECT_EQ(find(*c, "det", "cpu")->verdict, CompareVerdict::kSame);
  EXPECT_EQ(find(*c, "det", "sim")->verdict, CompareVerdict::kOnlyInA);
  EXPECT_EQ(find(*c, "det", "cuda")->verdict, CompareVerdict::kOnlyInB);
  const CompareRow* webgpu = find(*c, "det", "webgpu");
  EXPECT_EQ(webgpu->verdict, CompareVerdict::kNotCompared);
  EXPECT_THAT(webgpu->reason, HasSubstr("failed in A (build_failed: no adapter)"));
  EXPECT_EQ(find(*c, "vad", "cpu")->verdict, CompareVerdict::kOnlyInA);
  EXPECT_EQ(find(*c, "rec", "cpu")->verdict, CompareVerdict::kOnlyInB);
  EXPECT_EQ(c->count(CompareVerdict::kOnlyInA), 2);
  EXPECT_EQ(c->count(CompareVerdict::kOnlyInB), 2);
  // Rows follow A's models, then B's only.
  EXPECT_EQ(c->rows.front().model, "det");
  EXPECT_EQ(c->rows.back().model, "rec");
}

TEST_F(CompareRecords, FormsAreKeptApart) {
  auto t = runs(50, 5.0, 0.1, 1);
  json f16 = row("cuda", runs(50, 2.0, 0.1, 2), true);
  f16["form"] = "f16";
  auto a = write("a.json", record("det", {row("cuda", t, true)}));
  auto b = write("b.json", record("det", {f16}));
  auto c = compare_bench_records(a, b);
  ASSERT_TRUE(c);
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->rows[0].verdict, CompareVerdict::kOnlyInA);
  EXPECT_EQ(c->rows[0].form, "f32");
  EXPECT_EQ(c->rows[1].verdict, CompareVerdict::kOnlyInB);
  EXPECT_EQ(c->rows[1].form, "f16");
}

TEST_F(CompareRecords, FormLabelsOfSeveralFormsAreMatchedByLabel) {
  // Records of several forms name each row's form (model_form): det:v1 and det:v2 both execute f32.
  auto labelled = [](json r, const std::string& label) {
    r["model_form"] = label;
    return r;
  };
  auto a = write("a.json", record("det", {labelled(row("cpu", runs(60, 5.0, 0.1, 1), true), "v1"), labelled(row("cpu", runs(60, 9.0, 0.1, 2), true), "v2")}));
  auto b = write("b.json", record("det", {labelled(row("cpu", runs(60, 9.0, 0.1, 3), true), "v2"), labelled(row("cpu", runs(60, 5.0, 0.1, 4), true), "v1")}));
  auto c = compare_bench_records(a, b);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->rows[0].form, "v1");
  EXPECT_EQ(c->rows[1].form, "v2");
  for (const auto& r : c->rows) EXPECT_EQ(r.verdict, CompareVerdict::kSame) << r.form;
  // A record without labels (an older one) is matched on the executed form.
  auto old = write("old.json", record("det", {row("cpu", runs(60, 5.0, 0.1, 5), true)}));
  auto c2 = compare_bench_records(old, a);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->count(CompareVerdict::kSame), 1);
  EXPECT_EQ(c2->count(CompareVerdict::kOnlyInB), 1);
}

TEST_F(CompareRecords, WhatBenchJsonPrintsIsOneSide) {
  // What `rung bench --json` prints: the records, one per model, under "records".
  json document = {{"schema", "rung-bench-records"}, {"schema_version", 1},
                   {"records", json::array({record("det", {row("cpu", runs(60, 5.0, 0.1, 1), true)}), record("vad", {row("cpu", runs(60, 1.0, 0.1, 2), true)})})}};
  auto d = write("printed.json", document);
  auto printed = compare_bench_records(d, d);
  ASSERT_TRUE(printed) << printed.error().message;
  EXPECT_EQ(printed->count(CompareVerdict::kSame), 2);
  document["records"][1]["measurements"][0]["rows"][0].erase("ok");
  auto bad_doc = write("bad-printed.json", document);
  auto refused_doc = compare_bench_records(d, bad_doc);
  ASSERT_FALSE(refused_doc);
  EXPECT_THAT(refused_doc.error().message, HasSubstr(bad_doc.string() + ": records[1].measurements[0].rows[0].ok is not true or false"));
  document["records"] = "none";
  auto no_list = compare_bench_records(d, write("no-list.json", document));
  ASSERT_FALSE(no_list);
  EXPECT_THAT(no_list.error().message, HasSubstr("\"records\" is not a list of records"));
}

TEST_F(CompareRecords, AListOfRecordsIsOneSide) {
  // What `rung bench --json` printed before its document had a schema: a JSON array, one record per model.
  json list = json::array({record("det", {row("cpu", runs(60, 5.0, 0.1, 1), true)}), record("vad", {row("cpu", runs(60, 1.0, 0.1, 2), true)})});
  auto a = write("all.json", list);
  auto c = compare_bench_records(a, a);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->count(CompareVerdict::kSame), 2);
  list[1]["measurements"][0]["rows"][0].erase("ok");
  auto bad = write("bad-list.json", list);
  auto refused = compare_bench_records(a, bad);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr(bad.string() + ": [1].measurements[0].rows[0].ok is not true or false"));
  list[1] = list[0];
  auto twice = compare_bench_records(a, write("twice-list.json", list));
  ASSERT_FALSE(twice);
  EXPECT_THAT(twice.error().message, HasSubstr("holds two records of model 'det'"));
}

TEST_F(CompareRecords, AnotherMachineBuildAndSeveralMeasurementsAreSaid) {
  auto t = runs(50, 5.0, 0.1, 1);
  json ra = record("det", {row("cpu", t, true)});
  json old = ra["measurements"][0];
  old["rows"][0] = row("cpu", runs(50, 50.0, 0.1, 9), true);  // an older, slower measurement: not the one compared
  ra["measurements"].insert(ra["measurements"].begin(), old);
  auto a = write("a.json", ra);
  json rb = record("det", {row("cpu", t, true)}, "gpu-box", "1.29.0");
  rb["measurements"][0]["device"] = "NVIDIA H200";
  rb["measurements"][0]["env"]["fingerprint"] = "xyz";
  auto b = write("b.json", rb);
  auto c = compare_bench_records(a, b);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(find(*c, "det", "cpu")->verdict, CompareVerdict::kSame);
  std::string notes;
  for (const auto& n : c->notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("A and B were measured on different machines: A on cpu EPYC (host box), B on NVIDIA H200 (host gpu-box)"));
  EXPECT_THAT(notes, HasSubstr("A and B ran on different ONNX Runtime builds: A 1.30.0 (API 23, /x/libonnxruntime.so), B 1.29.0"));
  EXPECT_THAT(notes, HasSubstr("A and B differ in env.fingerprint: A absent, B xyz"));
  EXPECT_THAT(notes, HasSubstr(a.string() + " holds 2 measurements: the last (2026-12-02T05:00:00Z) is compared for det (A)"));
}

TEST_F(CompareRecords, DamagedRecordsAreRefusedNamingTheFile) {
  auto t = runs(20, 5.0, 0.1, 1);
  auto good = write("good.json", record("det", {row("cpu", t, true)}));
  auto expect_refused = [&](const std::string& name, const std::string& text, const std::string& why) {
    auto bad = write(name, text);
    auto c = compare_bench_records(good, bad);
    ASSERT_FALSE(c) << name;
    EXPECT_THAT(c.error().message, HasSubstr(bad.string())) << name;
    EXPECT_THAT(c.error().message, HasSubstr(why)) << name;
    auto c2 = compare_bench_records(bad, good);
    ASSERT_FALSE(c2);
    EXPECT_THAT(c2.error().message, HasSubstr(bad.string()));
  };
  const std::string text = record("det", {row("cpu", t, true)}).dump();
  expect_refused("cut.json", text.substr(0, text.size() / 2), "not valid JSON");
  expect_refused("array.json", "[1, 2]", "not a rung bench record");
  expect_refused("other.json", R"({"schema": "rung-conform-record", "schema_version": 1})", "not a rung bench record");
  json j = record("det", {row("cpu", t, true)});
  j["measurements"] = json::array();
  expect_refused("empty.json", j.dump(), "holds no measurements");
  j = record("det", {row("cpu", t, true)});
  j["measurements"][0]["rows"][0].erase("rung");
  expect_refused("norung.json", j.dump(), "measurements[0].rows[0] names no rung");
  j = record("det", {row("cpu", t, true)});
  j["measurements"][0]["rows"][0]["latency_ms"]["p50"] = "fast";
  expect_refused("p50.json", j.dump(), "measurements[0].rows[0].latency_ms lacks p50 or p90");
  j = record("det", {row("cpu", t, true)});
  j["measurements"][0]["rows"][0]["run_ms"][3] = -1;
  expect_refused("negative.json", j.dump(), "measurements[0].rows[0].run_ms holds -1");
  j = record("det", {row("cpu", t, true), row("cpu", t, true)});
  expect_refused("twice.json", j.dump(), "rung cpu (f32) appears twice");
  j = record("det", {row("cpu", t, true)});
  j["model"].erase("name");
  expect_refused("noname.json", j.dump(), "model has no name");
  std::string deep(100, '[');
  expect_refused("deep.json", deep + std::string(100, ']'), "nested deeper");

  auto missing = compare_bench_records(dir_ / "nope.json", good);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr((dir_ / "nope.json").string() + ": does not exist"));
  fs::create_directories(dir_ / "emptydir");
  auto none = compare_bench_records(dir_ / "emptydir", good);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("holds no .json record"));
  // Two records of one model on a side.
  write("two/x.json", record("det", {row("cpu", t, true)}));
  write("two/y.json", record("det", {row("cpu", t, true)}));
  auto two = compare_bench_records(dir_ / "two", good);
  ASSERT_FALSE(two);
  EXPECT_THAT(two.error().message, HasSubstr("are both records of model 'det'"));
}

TEST_F(CompareRecords, ThresholdOutOfRangeIsRefused) {
  auto t = runs(20, 5.0, 0.1, 1);
  auto good = write("good.json", record("det", {row("cpu", t, true)}));
  BenchCompareOptions o;
  o.threshold = 1.0;
  EXPECT_FALSE(compare_bench_records(good, good, o));
  o.threshold = -0.1;
  EXPECT_FALSE(compare_bench_records(good, good, o));
}

TEST_F(CompareRecords, HtmlHasARowAndABarPerModelAndRung) {
  auto a = write("a/det.json", record("det", {row("cpu", runs(100, 5.0, 0.1, 1), true), row("sim", runs(100, 5.0, 0.1, 2), true)}));
  write("a/vad.json", record("vad<&>", {row("cpu", runs(100, 1.0, 0.1, 3), true)}));
  write("b/det.json", record("det", {row("cpu", runs(100, 7.0, 0.1, 4), true), row("sim", runs(100, 5.0, 0.1, 5), true)}));
  (void)a;
  auto c = compare_bench_records(dir_ / "a", dir_ / "b");
  ASSERT_TRUE(c);
  const std::string html = bench_comparison_html(*c);
  EXPECT_THAT(html, HasSubstr("<tr class=\"row regression\"><td class=\"text\">det</td>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"row same\"><td class=\"text\">det</td>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"row only-in-a\"><td class=\"text\">vad&lt;&amp;&gt;</td>"));
  std::size_t bars = 0;
  for (auto p = html.find("<rect class=\"interval "); p != std::string::npos; p = html.find("<rect class=\"interval ", p + 1)) ++bars;
  EXPECT_EQ(bars, 2u);  // one per compared row; none for the model only in A
}

}  // namespace
}  // namespace rung
