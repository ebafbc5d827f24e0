// `rung bench compare A B`: two bench records (or directories of them), B's time
// over A's per model × form × rung with an interval and a verdict; a table on
// stdout, the comparison as JSON (--json, --out-json) and a page (--html).
// Exit 0: no regression; 1: at least one (CI gates on it); 2: bad input.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "output_check.h"
#include "rung/ratio_text.h"
#include "rung/bench_compare.h"
#include "rung/output_paths.h"
#include "rung/print.h"

namespace rung::cli {
namespace {

struct CompareCliOptions {
  std::string a;
  std::string b;
  std::vector<std::string> extra;  // a third path and on: refused, never left to bench as models
  double threshold = 0.10;
  double confidence = 0.95;
  JsonOutput json;
  std::string html;
};

std::string ms(double v) { return v >= 100 ? fmt::format("{:.1f}", v) : v >= 1 ? fmt::format("{:.2f}", v) : fmt::format("{:.4f}", v); }

nlohmann::json side_json(const std::optional<CompareSide>& s) {
  if (!s) return nullptr;
  nlohmann::json j = {{"ok", s->failure.empty()}, {"output_match", s->output_match.empty() ? nlohmann::json(nullptr) : nlohmann::json(s->output_match)}};
  if (s->failure.empty()) {
    j["p50_ms"] = s->p50_ms;
    j["runs"] = s->runs;
    j["every_run"] = s->every_run;
  } else {
    j["failure"] = s->failure;
  }
  return j;
}

nlohmann::json input_json(const CompareInput& in) {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& r : in.records) records.push_back(r.string());
  return {{"path", in.path.string()}, {"records", records}, {"date", in.date.empty() ? nlohmann::json(nullptr) : nlohmann::json(in.date)}};
}

nlohmann::json comparison_json(const BenchComparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows) {
    nlohmann::json row = {{"model", r.model}, {"form", r.form}, {"rung", r.rung}, {"rung_display", r.rung_display},
                          {"verdict", compare_verdict_name(r.verdict)}};
    if (r.interval) {
      row["ratio"] = r.interval->ratio;
      row["low"] = r.interval->low;
      row["high"] = r.interval->high;
      row["method"] = r.interval->method;
    } else {
      row["ratio"] = row["low"] = row["high"] = row["method"] = nullptr;
    }
    row["a"] = side_json(r.a);
    row["b"] = side_json(r.b);
    row["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
    rows.push_back(row);
  }
  nlohmann::json counts;
  for (auto v : {CompareVerdict::kRegression, CompareVerdict::kImprovement, CompareVerdict::kSame, CompareVerdict::kUnclear,
                 CompareVerdict::kNotCompared, CompareVerdict::kOnlyInA, CompareVerdict::kOnlyInB}) {
    counts[compare_verdict_name(v)] = c.count(v);
  }
  return {{"schema", "rung-bench-compare"},
          {"schema_version", 1},
          {"a", input_json(c.a)},
          {"b", input_json(c.b)},
          {"threshold", c.options.threshold},
          {"confidence", c.options.confidence},
          {"ratio", "B's median time over A's"},
          {"interval",
           fmt::format("{:g}% two-sided, unpaired: a percentile bootstrap of the ratio of medians ({} resamples, A's and B's runs drawn "
                       "independently) where both records hold every run's time, else a normal approximation from each side's p50, p90 and count",
                       c.options.confidence * 100, c.options.resamples)},
          {"notes", c.notes},
          {"rows", rows},
          {"counts", counts},
          {"exit_code", c.count(CompareVerdict::kRegression) > 0 ? kExitFailed : kExitOk}};
}

void print_table(const BenchComparison& c) {
  auto side = [](const char* name, const CompareInput& in) {
    rung::print("{}: {} ({} record{}{})\n", name, in.path.string(), in.records.size(), in.records.size() == 1 ? "" : "s",
               in.date.empty() ? "" : ", measured " + in.date);
  };
  side("A", c.a);
  side("B", c.b);
  for (const auto& n : c.notes) rung::print("note: {}\n", n);
  const double t = c.options.threshold;
  rung::print("B/A: B's median time over A's, {:g}% interval (unpaired; bootstrap where both hold every run, else from p50/p90/count); "
             "regression above {:g}, improvement below {:g}\n\n",
             c.options.confidence * 100, 1 + t, 1 - t);
  std::size_t mw = 5, fw = 4, rw = 4;
  for (const auto& r : c.rows) {
    mw = std::max(mw, r.model.size());
    fw = std::max(fw, r.form.size());
    rw = std::max(rw, r.rung_display.size());
  }
  rung::print("  {:<{}} {:<{}} {:<{}} {:>10} {:>10} {:>11} {:>7} {:>17} {:<9}  {}\n", "model", mw, "form", fw, "rung", rw, "A p50 ms", "B p50 ms",
             "runs A/B", "B/A", "interval", "method", "verdict");
  for (const auto& r : c.rows) {
    auto p50 = [](const std::optional<CompareSide>& s) { return s && s->runs > 0 ? ms(s->p50_ms) : std::string("-"); };
    auto runs = [](const std::optional<CompareSide>& s) { return s && s->runs > 0 ? std::to_string(s->runs) : std::string("-"); };
    std::string ratio = "-", interval = "-", method = "-";
    if (r.interval) {
      ratio = fmt::format("{:.3f}×", r.interval->ratio);  // the time ratio, as rung/ratio_text.h writes it, to three decimals
      interval = fmt::format("[{:.3f}–{:.3f}]", r.interval->low, r.interval->high);
      method = r.interval->method;
    }
    std::string verdict = r.verdict == CompareVerdict::kRegression ? "REGRESSION" : compare_verdict_name(r.verdict);
    if (!r.reason.empty()) verdict += " (" + r.reason + ")";
    rung::print("  {:<{}} {:<{}} {:<{}} {:>10} {:>10} {:>11} {:>7} {:>17} {:<9}  {}\n", r.model, mw, r.form, fw, r.rung_display, rw, p50(r.a), p50(r.b),
               runs(r.a) + "/" + runs(r.b), ratio, interval, method, verdict);
  }
  rung::print("\n{} regression{}, {} improvement{}, {} same, {} unclear, {} not compared, {} only in A, {} only in B\n",
             c.count(CompareVerdict::kRegression), c.count(CompareVerdict::kRegression) == 1 ? "" : "s", c.count(CompareVerdict::kImprovement),
             c.count(CompareVerdict::kImprovement) == 1 ? "" : "s", c.count(CompareVerdict::kSame), c.count(CompareVerdict::kUnclear),
             c.count(CompareVerdict::kNotCompared), c.count(CompareVerdict::kOnlyInA), c.count(CompareVerdict::kOnlyInB));
}

int run_compare(const CompareCliOptions& o) {
  if (!o.extra.empty()) throw CliError(kExitUsage, fmt::format("bench compare takes two records, A and B; also given: {}", o.extra.front()));
  check_outputs_before_work({o.json.output(), {"--html", o.html}}, {{"record A", o.a}, {"record B", o.b}});
  BenchCompareOptions options;
  options.threshold = o.threshold;
  options.confidence = o.confidence;
  auto c = compare_bench_records(o.a, o.b, options);
  if (!c) throw CliError(kExitUsage, c.error().message);
  if (!o.json.on_stdout()) print_table(*c);
  o.json.emit(comparison_json(*c));
  if (!o.html.empty()) {
    if (auto s = write_output_file(o.html, bench_comparison_html(*c)); !s) throw CliError(kExitUsage, fmt::format("--html {}: {}", o.html, s.error().message));
    if (!o.json.on_stdout()) rung::print("report: {}\n", o.html);
  }
  const int regressions = c->count(CompareVerdict::kRegression);
  if (regressions == 0) return kExitOk;
  std::string which;
  for (const auto& r : c->rows) {
    if (r.verdict != CompareVerdict::kRegression) continue;
    which += fmt::format("{}{} {} {} ({})", which.empty() ? "" : ", ", r.model, r.form, r.rung, ratio_text(r.interval->ratio));
  }
  throw CliError(kExitFailed, fmt::format("{} regression{} beyond {:g}%: {}", regressions, regressions == 1 ? "" : "s", o.threshold * 100, which));
}

}  // namespace

void add_bench_compare_command(CLI::App& bench) {
  // CLI11 2.1 takes a subcommand's name for a positional while a *required*
  // positional is unfilled, so `rung bench compare a b` would bench three models
  // named compare, a and b. Bench's MODEL is therefore not required by CLI11;
  // run_bench_command refuses no model itself (exit 2, "give at least one MODEL").
  if (auto* models = bench.get_option_no_throw("models")) models->required(false);
  auto o = std::make_shared<CompareCliOptions>();
  auto* cmd = bench.add_subcommand("compare", "Compare two bench records (or directories of them): B's time over A's per model and rung, with a verdict");
  add_text(*cmd, "a", o->a, "Record A, the baseline: a bench record file, or a directory of them")->required()->type_name("A");
  add_text(*cmd, "b", o->b, "Record B, compared with A: a bench record file, or a directory of them")->required()->type_name("B");
  add_text(*cmd, "extra", o->extra, "Nothing: a third path is refused")->group("");
  add_number(*cmd, "--threshold", o->threshold, "A change smaller than this share is no change (0.10: 10%)", {0, 0.99, "", "a share of A's time"})
      ->capture_default_str();
  add_number(*cmd, "--confidence", o->confidence, "Confidence of the ratio's interval", {0.5, 0.999})->capture_default_str();
  o->json.add_to(*cmd, "the comparison");
  add_text(*cmd, "--html", o->html, "Write a self-contained HTML page of the comparison here")->type_name("FILE");
  // Run as soon as compare's own arguments are parsed: `rung bench`'s required MODEL
  // positional and its callback never see `rung bench compare A B`. Every way out
  // is an exception main() maps to the exit code: CLI::Success for 0, CliError else.
  cmd->parse_complete_callback([o] {
    const int code = run_compare(*o);
    if (code == kExitOk) throw CLI::Success();
    throw CliError(code, "bench compare failed");
  });
}

}  // namespace rung::cli
