// `rung bench compare`: two sides of bench records, row by row. See rung/bench_compare.h.
#include "rung/bench_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/html_text.h"
#include "core/sample_stats.h"
#include "bench/ms_text.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "rung/ratio_text.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
// Not `json`: record.cpp, compiled in the same unit, names the ordered kind so.
using Json = nlohmann::json;

const char* compare_verdict_name(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::kRegression: return "regression";
    case CompareVerdict::kImprovement: return "improvement";
    case CompareVerdict::kSame: return "same";
    case CompareVerdict::kUnclear: return "unclear";
    case CompareVerdict::kNotCompared: return "not compared";
    case CompareVerdict::kOnlyInA: return "only in A";
    case CompareVerdict::kOnlyInB: return "only in B";
  }
  return "?";
}

CompareVerdict compare_verdict(double low, double high, double threshold) {
  if (low > 1 + threshold) return CompareVerdict::kRegression;
  if (high < 1 - threshold) return CompareVerdict::kImprovement;
  if (low >= 1 - threshold && high <= 1 + threshold) return CompareVerdict::kSame;
  return CompareVerdict::kUnclear;
}

int BenchComparison::count(CompareVerdict v) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [v](const CompareRow& r) { return r.verdict == v; }));
}

namespace {

// Every k-th run, in order, down to at most `cap`: the bootstrap's cost stays bounded on --duration records.
std::vector<double> thinned(const std::vector<double>& v, std::size_t cap) {
  if (v.size() <= cap) return v;
  const std::size_t k = (v.size() + cap - 1) / cap;
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); i += k) out.push_back(v[i]);
  return out;
}

// The standard normal's quantile, by bisection on erfc (monotone; 80 halvings reach double precision).
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 80; ++i) {
    const double mid = (lo + hi) / 2;
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

std::optional<RatioInterval> bootstrap_ratio_interval(const std::vector<double>& a_all, const std::vector<double>& b_all, double confidence,
                                                      int resamples, std::uint64_t seed) {
  if (a_all.size() < kMinBootstrapRuns || b_all.size() < kMinBootstrapRuns || resamples < 10) return std::nullopt;
  if (!(confidence > 0 && confidence < 1)) return std::nullopt;
  const double ma = median(a_all), mb = median(b_all);
  if (!(ma > 0) || !std::isfinite(ma) || !std::isfinite(mb)) return std::nullopt;
  const std::vector<double> a = thinned(a_all, kMaxBootstrapRuns), b = thinned(b_all, kMaxBootstrapRuns);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick_a(0, a.size() - 1), pick_b(0, b.size() - 1);
  std::vector<double> ratios, ra(a.size()), rb(b.size());
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : ra) x = a[pick_a(rng)];
    for (auto& x : rb) x = b[pick_b(rng)];
    const double da = median(ra);
    if (da > 0) ratios.push_back(median(rb) / da);
  }
  if (ratios.size() < 10) return std::nullopt;
  RatioInterval out;
  out.ratio = mb / ma;
  out.low = percentile(ratios, 100 * (1 - confidence) / 2);
  out.high = percentile(ratios, 100 * (1 + confidence) / 2);
  // The point estimate lies inside its interval (a percentile bootstrap of a median can, on few runs, miss it by a hair).
  out.low = std::min(out.low, out.ratio);
  out.high = std::max(out.high, out.ratio);
  out.method = "bootstrap";
  return out;
}

std::optional<RatioInterval> ratio_from_summaries(const TimingSummary& a, const TimingSummary& b, double confidence) {
  if (a.count < 2 || b.count < 2 || !(a.p50 > 0) || !(b.p50 > 0)) return std::nullopt;
  if (!(confidence > 0 && confidence < 1)) return std::nullopt;
  auto relative_se = [](const TimingSummary& s) {
    double sigma = (s.p90 - s.p50) / 1.2816;  // the normal's 90th percentile is 1.2816 sigma above its median
    if (!(sigma > 0)) sigma = s.stddev;
    return std::sqrt(std::numbers::pi / 2) * std::max(sigma, 0.0) / std::sqrt(static_cast<double>(s.count)) / s.p50;
  };
  const double ra = relative_se(a), rb = relative_se(b);
  const double se = std::sqrt(ra * ra + rb * rb);
  if (!std::isfinite(se)) return std::nullopt;
  const double z = normal_quantile((1 + confidence) / 2);
  RatioInterval out;
  out.ratio = b.p50 / a.p50;
  out.low = out.ratio * std::exp(-z * se);
  out.high = out.ratio * std::exp(z * se);
  out.method = "summary";
  return out;
}

namespace {

// One row of one side's measurement, as read.
struct SideRow {
  std::string form, rung, display;
  std::string model_form;  // the form's label when the record names it (records of several forms): NAME:FORM
  const std::string& shown_form() const { return model_form.empty() ? form : model_form; }
  // The same row of the other side: the same rung, and the same form label (the executed form where a record names none).
  bool same_as(const SideRow& o) const {
    return rung == o.rung && (!model_form.empty() && !o.model_form.empty() ? model_form == o.model_form : form == o.form);
  }
  bool ok = false;
  std::string failure;
  std::string match;
  TimingSummary summary;
  std::vector<double> runs;  // every run's time, when the record holds them
};

struct SideModel {
  std::string name, sha256, stable_sha256;
  fs::path record;
  std::size_t measurements = 0;
  Json measurement;  // the last one, as read (env, settings, device)
  std::string date;
  std::vector<SideRow> rows;
};

Error bad(const fs::path& file, const std::string& why) { return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", file.string(), why)}; }

std::string text_at(const Json& o, const char* key) { return json_string_or(o, key, ""); }

std::optional<double> non_negative(const Json& o, const char* key) {
  if (!o.is_object() || !o.contains(key)) return std::nullopt;
  auto v = json_finite(o[key]);
  return v && *v >= 0 ? v : std::nullopt;
}

// Every run's time, under the names a record may give them (the worker's `run_ms`; a
// latency object's `runs`). Absent: nullopt. Present but not a list of times: an error.
Result<std::optional<std::vector<double>>> every_run(const Json& row, const fs::path& file, const std::string& where) {
  const std::pair<const Json*, const char*> places[] = {
      {&row, "run_ms"}, {&row, "runs_ms"}, {&row, "samples_ms"}, {row.contains("latency_ms") ? &row["latency_ms"] : nullptr, "runs"},
      {row.contains("latency_ms") ? &row["latency_ms"] : nullptr, "run_ms"}};
  for (const auto& [obj, key] : places) {
    if (!obj || !obj->is_object() || !obj->contains(key) || (*obj)[key].is_null()) continue;
    const Json& v = (*obj)[key];
    if (!v.is_array()) return bad(file, fmt::format("{}.{} is not a list of times", where, key));
    std::vector<double> out;
    out.reserve(v.size());
    for (const auto& x : v) {
      auto d = json_finite(x);
      if (!d || *d < 0) return bad(file, fmt::format("{}.{} holds {}, not a time in ms", where, key, json_text(x).substr(0, 40)));
      out.push_back(*d);
    }
    return std::optional<std::vector<double>>(std::move(out));
  }
  return std::optional<std::vector<double>>();
}

Result<SideRow> read_row(const Json& r, const std::string& model_form, const fs::path& file, const std::string& where) {
  if (!r.is_object()) return bad(file, where + " is not an object");
  SideRow row;
  row.rung = text_at(r, "rung");
  if (row.rung.empty()) return bad(file, where + " names no rung");
  row.display = json_string_or(r, "rung_display", row.rung);
  if (row.display.empty()) row.display = row.rung;
  row.form = json_string_or(r, "form", model_form);
  row.model_form = json_string_or(r, "model_form", "");
  if (!r.contains("ok") || !r["ok"].is_boolean()) return bad(file, where + ".ok is not true or false");
  row.ok = r["ok"].get<bool>();
  if (r.contains("output_match") && r["output_match"].is_object()) row.match = text_at(r["output_match"], "verdict");
  if (!row.ok) {
    const std::string cls = text_at(r, "failure_class"), why = text_at(r, "failure_reason");
    row.failure = cls.empty() ? "failed" : cls;
    if (!why.empty()) row.failure += ": " + why;
    return row;
  }
  if (!r.contains("latency_ms") || !r["latency_ms"].is_object()) return bad(file, where + " ran but has no latency_ms object");
  const Json& l = r["latency_ms"];
  auto count = l.contains("count") ? json_integer(l["count"], 1, INT32_MAX) : std::nullopt;
  if (!count) return bad(file, where + ".latency_ms.count is not a whole number of runs");
  auto p50 = non_negative(l, "p50");
  auto p90 = non_negative(l, "p90");
  if (!p50 || !p90) return bad(file, where + ".latency_ms lacks p50 or p90 (times in ms)");
  row.summary.count = static_cast<int>(*count);
  row.summary.p50 = *p50;
  row.summary.p90 = *p90;
  row.summary.stddev = non_negative(l, "stddev").value_or(0);
  auto runs = every_run(r, file, where);
  if (!runs) return runs.error();
  if (*runs) {
    row.runs = std::move(**runs);
    if (row.runs.empty()) return bad(file, where + " ran but its list of run times is empty");
  }
  return row;
}

// One record, `where` naming it inside its file ("" for a file that is one record, "[2]" in a list).
Result<SideModel> read_record(const Json& j, const fs::path& file, const std::string& where) {
  const std::string in = where.empty() ? "" : where + ": ";
  if (!j.is_object() || text_at(j, "schema") != "rung-bench-record") {
    return bad(file, in + "not a rung bench record (no \"schema\": \"rung-bench-record\")");
  }
  if (!j.contains("schema_version") || !json_integer(j["schema_version"], 1, INT32_MAX)) return bad(file, in + "the record has no schema_version");
  if (!j.contains("model") || !j["model"].is_object()) return bad(file, in + "the record has no model object");
  SideModel m;
  m.record = file;
  m.name = text_at(j["model"], "name");
  if (m.name.empty()) return bad(file, in + "the record's model has no name");
  m.sha256 = text_at(j["model"], "sha256");
  m.stable_sha256 = text_at(j["model"], "stable_sha256");
  const std::string model_form = text_at(j["model"], "form");
  if (!j.contains("measurements") || !j["measurements"].is_array() || j["measurements"].empty()) {
    return bad(file, in + "the record holds no measurements");
  }
  m.measurements = j["measurements"].size();
  const std::size_t last = m.measurements - 1;
  const Json& meas = j["measurements"][last];
  const std::string at = fmt::format("{}measurements[{}]", where.empty() ? "" : where + ".", last);
  if (!meas.is_object()) return bad(file, at + " is not an object");
  if (!meas.contains("rows") || !meas["rows"].is_array()) return bad(file, at + " has no rows");
  m.measurement = meas;
  m.measurement.erase("rows");
  if (meas.contains("provenance")) m.date = text_at(meas["provenance"], "date");
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < meas["rows"].size(); ++i) {
    auto row = read_row(meas["rows"][i], model_form, file, fmt::format("{}.rows[{}]", at, i));
    if (!row) return row.error();
    if (!seen.insert({row->shown_form(), row->rung}).second) {
      return bad(file, fmt::format("{}.rows[{}]: rung {} ({}) appears twice", at, i, row->rung, row->shown_form()));
    }
    m.rows.push_back(std::move(*row));
  }
  return m;
}

// A record file, what `rung bench --json` prints (records under "records"), or a
// bare list of records (what it printed before that document had a schema).
Result<std::vector<SideModel>> read_record_file(const fs::path& file) {
  auto parsed = read_json_file(file, FileKind::kDocument);
  if (!parsed) return Error{ErrorCode::kInvalidArgument, parsed.error().message};
  std::vector<SideModel> out;
  const bool document = parsed->is_object() && text_at(*parsed, "schema") == "rung-bench-records";
  if (document && !(parsed->contains("records") && (*parsed)["records"].is_array())) return bad(file, "\"records\" is not a list of records");
  const Json& list = document ? (*parsed)["records"] : *parsed;
  const std::string prefix = document ? "records" : "";
  if (!list.is_array()) {
    auto m = read_record(list, file, "");
    if (!m) return m.error();
    out.push_back(std::move(*m));
    return out;
  }
  if (list.empty()) return bad(file, "an empty list, not a rung bench record");
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto m = read_record(list[i], file, fmt::format("{}[{}]", prefix, i));
    if (!m) return m.error();
    out.push_back(std::move(*m));
  }
  return out;
}

// One side: a record file, or a directory whose *.json files are all records.
Result<std::vector<SideModel>> read_side(const fs::path& path, CompareInput& input) {
  std::error_code ec;
  input.path = path;
  if (!fs::exists(path, ec)) return missing_path(path);
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (e.path().extension() == ".json" && e.is_regular_file(ec)) files.push_back(e.path());
    }
    if (ec) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: cannot list the directory: {}", path.string(), ec.message())};
    std::sort(files.begin(), files.end());
    if (files.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the directory holds no .json record", path.string())};
  } else {
    files.push_back(path);
  }
  std::vector<SideModel> out;
  for (const auto& f : files) {
    auto models = read_record_file(f);
    if (!models) return models.error();
    for (auto& m : *models) {
      for (const auto& o : out) {
        if (o.name == m.name) {
          return Error{ErrorCode::kInvalidArgument,
                       o.record == f ? fmt::format("{} holds two records of model '{}': one record per model on a side", f.string(), m.name)
                                     : fmt::format("{} and {} are both records of model '{}': one record per model on a side", o.record.string(),
                                                   f.string(), m.name)};
        }
      }
      input.date = std::max(input.date, m.date);
      out.push_back(std::move(m));
    }
    input.records.push_back(f);
  }
  return out;
}

std::string env_text(const Json& meas, const char* key) {
  return meas.contains("env") && meas["env"].is_object() && meas["env"].contains(key) ? json_text(meas["env"][key]) : "";
}

std::string unquoted(const std::string& dumped) {
  return dumped.size() >= 2 && dumped.front() == '"' && dumped.back() == '"' ? dumped.substr(1, dumped.size() - 2) : dumped;
}

// What differs between the two measurements compared, as header lines.
void note_differences(const SideModel& a, const SideModel& b, std::vector<std::string>& notes) {
  auto add = [&notes](std::string line) {
    if (std::find(notes.begin(), notes.end(), line) == notes.end()) notes.push_back(std::move(line));
  };
  const Json& ma = a.measurement;
  const Json& mb = b.measurement;
  auto machine = [](const Json& m) {
    const std::string device = json_string_or(m, "device", "?");
    const std::string host = m.contains("env") ? json_string_or(m["env"], "hostname", "") : "";
    return host.empty() ? device : fmt::format("{} (host {})", device, host);
  };
  bool machines = json_string_or(ma, "device", "") != json_string_or(mb, "device", "");
  for (const char* k : {"hostname", "cpu", "os", "logical_cpus", "hardware_identity"}) machines = machines || env_text(ma, k) != env_text(mb, k);
  if (machines) add(fmt::format("A and B were measured on different machines: A on {}, B on {}", machine(ma), machine(mb)));
  auto runtime = [](const Json& m) -> Json {
    return m.contains("env") && m["env"].is_object() && m["env"].contains("runtime") ? m["env"]["runtime"] : Json();
  };
  if (runtime(ma) != runtime(mb)) {
    auto name = [](const Json& r) {
      return fmt::format("{} (API {}, {})", json_string_or(r, "version", "?"), r.is_object() && r.contains("api_version") ? json_text(r["api_version"]) : "?",
                         json_string_or(r, "library", "?"));
    };
    add(fmt::format("A and B ran on different ONNX Runtime builds: A {}, B {}", name(runtime(ma)), name(runtime(mb))));
  }
  if (env_text(ma, "threads") != env_text(mb, "threads")) {
    add(fmt::format("A and B ran with different intra-op threads: A {}, B {} (0: ONNX Runtime's default)", env_text(ma, "threads"),
                    env_text(mb, "threads")));
  }
  // Anything else the environment or a fingerprint says (fields newer records may add).
  static const std::set<std::string> known = {"hostname", "cpu", "os", "logical_cpus", "hardware_identity", "runtime", "threads"};
  std::set<std::string> keys;
  for (const Json* m : {&ma, &mb}) {
    if (m->contains("env") && (*m)["env"].is_object()) {
      for (auto it = (*m)["env"].begin(); it != (*m)["env"].end(); ++it) {
        if (!known.count(it.key())) keys.insert("env." + it.key());
      }
    }
    for (auto it = m->begin(); it != m->end(); ++it) {
      if (it.key().find("fingerprint") != std::string::npos) keys.insert(it.key());
    }
  }
  for (const auto& k : keys) {
    auto value = [&k](const Json& m) -> std::string {
      if (k.rfind("env.", 0) == 0) return env_text(m, k.substr(4).c_str());
      return m.contains(k) ? json_text(m[k]) : "";
    };
    const std::string va = value(ma), vb = value(mb);
    if (va == vb) continue;
    auto shown = [](const std::string& v) { return v.empty() ? std::string("absent") : unquoted(v).substr(0, 80); };
    add(fmt::format("A and B differ in {}: A {}, B {}", k, shown(va), shown(vb)));
  }
  std::vector<std::string> settings;
  for (const char* k : {"warmup", "runs", "duration_s", "rounds", "inputs"}) {
    auto s = [k](const Json& m) { return m.contains("settings") && m["settings"].is_object() && m["settings"].contains(k) ? json_text(m["settings"][k]) : ""; };
    if (s(ma) != s(mb)) settings.push_back(fmt::format("{} {} against {}", k, unquoted(s(ma)), unquoted(s(mb))));
  }
  if (!settings.empty()) {
    std::string joined;
    for (const auto& s : settings) joined += (joined.empty() ? "" : "; ") + s;
    add(fmt::format("{}: A and B were measured with different settings: {}", a.name, joined));
  }
  if (a.sha256 != b.sha256) {
    const bool doc_only = !a.stable_sha256.empty() && a.stable_sha256 == b.stable_sha256;
    add(fmt::format("{}: A and B measured different model files (sha256 {}… and {}…){}", a.name, a.sha256.substr(0, 12), b.sha256.substr(0, 12),
                    doc_only ? "; only their doc strings differ (the stable hash is the same)" : ""));
  }
}

CompareSide side_of(const SideRow& r) {
  CompareSide s;
  s.p50_ms = r.ok ? (r.runs.empty() ? r.summary.p50 : median(r.runs)) : 0;
  s.runs = r.ok ? (r.runs.empty() ? r.summary.count : static_cast<int>(r.runs.size())) : 0;
  s.every_run = !r.runs.empty();
  s.output_match = r.match;
  s.failure = r.failure;
  return s;
}

CompareRow compare_rows(const std::string& model, const SideRow& a, const SideRow& b, const BenchCompareOptions& o, std::uint64_t seed) {
  CompareRow row{model, a.shown_form(), a.rung, a.display, CompareVerdict::kUnclear, std::nullopt, side_of(a), side_of(b), ""};
  if (!a.ok || !b.ok) {
    row.verdict = CompareVerdict::kNotCompared;
    row.reason = !a.ok && !b.ok ? "failed in A and in B" : !a.ok ? "failed in A (" + a.failure + ")" : "failed in B (" + b.failure + ")";
    return row;
  }
  if (!a.runs.empty() && !b.runs.empty()) row.interval = bootstrap_ratio_interval(a.runs, b.runs, o.confidence, o.resamples, seed);
  if (!row.interval) row.interval = ratio_from_summaries(a.summary, b.summary, o.confidence);
  if (!row.interval) {
    row.reason = "too few runs for an interval";
    return row;
  }
  row.verdict = compare_verdict(row.interval->low, row.interval->high, o.threshold);
  std::vector<std::string> why;
  if (a.match == "mismatch") why.push_back("A's outputs differ from the CPU's");
  if (b.match == "mismatch") why.push_back("B's outputs differ from the CPU's");
  for (const auto& w : why) row.reason += (row.reason.empty() ? "" : "; ") + w;
  return row;
}

CompareRow only_row(const std::string& model, const SideRow& r, bool in_a) {
  CompareRow row{model, r.shown_form(), r.rung, r.display, in_a ? CompareVerdict::kOnlyInA : CompareVerdict::kOnlyInB, std::nullopt, std::nullopt,
                 std::nullopt, ""};
  (in_a ? row.a : row.b) = side_of(r);
  return row;
}

}  // namespace

Result<BenchComparison> compare_bench_records(const fs::path& a_path, const fs::path& b_path, const BenchCompareOptions& options) {
  if (!(options.threshold >= 0 && options.threshold < 1)) return Error{ErrorCode::kInvalidArgument, "the threshold must be in [0, 1)"};
  if (!(options.confidence > 0 && options.confidence < 1)) return Error{ErrorCode::kInvalidArgument, "the confidence must be in (0, 1)"};
  BenchComparison c;
  c.options = options;
  auto a = read_side(a_path, c.a);
  if (!a) return a.error();
  auto b = read_side(b_path, c.b);
  if (!b) return b.error();
  auto find_model = [](std::vector<SideModel>& side, const std::string& name) -> SideModel* {
    for (auto& m : side) if (m.name == name) return &m;
    return nullptr;
  };
  auto note_measurements = [&c](const SideModel& m, const char* side) {
    if (m.measurements > 1) {
      c.notes.push_back(fmt::format("{} holds {} measurements: the last ({}) is compared for {} ({})", m.record.string(), m.measurements,
                                    m.date.empty() ? "undated" : m.date, m.name, side));
    }
  };
  std::uint64_t seed = options.seed;
  for (auto& ma : *a) {
    note_measurements(ma, "A");
    SideModel* mb = find_model(*b, ma.name);
    if (!mb) {
      for (const auto& r : ma.rows) c.rows.push_back(only_row(ma.name, r, true));
      continue;
    }
    note_differences(ma, *mb, c.notes);
    std::vector<bool> matched(mb->rows.size(), false);
    for (const auto& ra : ma.rows) {
      std::size_t k = 0;
      while (k < mb->rows.size() && (matched[k] || !ra.same_as(mb->rows[k]))) ++k;
      if (k == mb->rows.size()) {
        c.rows.push_back(only_row(ma.name, ra, true));
        continue;
      }
      matched[k] = true;
      c.rows.push_back(compare_rows(ma.name, ra, mb->rows[k], options, seed++));
    }
    for (std::size_t k = 0; k < mb->rows.size(); ++k) {
      if (!matched[k]) c.rows.push_back(only_row(ma.name, mb->rows[k], false));
    }
  }
  for (auto& mb : *b) {
    note_measurements(mb, "B");
    if (find_model(*a, mb.name)) continue;
    for (const auto& r : mb.rows) c.rows.push_back(only_row(mb.name, r, false));
  }
  return c;
}

namespace {

const char* kCompareStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2330; background: #ffffff; }
h1 { font-size: 22px; margin: 0 0 4px; }
.inputs, .rule { color: #4a5366; margin: 2px 0; }
.notes li { color: #8a5300; }
table { border-collapse: collapse; margin: 12px 0 16px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #dde2ea; text-align: right; white-space: nowrap; }
th.text, td.text { text-align: left; }
td.reason { text-align: left; white-space: normal; color: #4a5366; font-size: 12px; }
tr.regression td { background: #fdecec; }
tr.regression td.verdict { color: #b3261e; font-weight: 700; }
tr.improvement td.verdict { color: #1f7a3a; font-weight: 700; }
tr.only-in-a td, tr.only-in-b td, tr.not-compared td { color: #7a8194; }
svg text { font: 11px system-ui, sans-serif; fill: #4a5366; }
svg .band { fill: #eef1f6; }
svg .one { stroke: #1d2330; stroke-width: 1; stroke-dasharray: 3 3; }
svg .interval { fill: #3b6fb6; }
svg .interval.regression { fill: #c4463a; }
svg .interval.improvement { fill: #2e8b57; }
svg .interval.unclear { fill: #c9a227; }
svg .point { fill: #1d2330; }
)";

std::string css_class(CompareVerdict v) {
  std::string s = compare_verdict_name(v);
  std::replace(s.begin(), s.end(), ' ', '-');
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}


}  // namespace

std::string bench_comparison_html(const BenchComparison& c) {
  const double t = c.options.threshold;
  // One log axis for every row: the threshold band with room, and every interval (clipped to 1/16x..16x).
  double lo = std::max(1.0 / 16, (1 - t) * 0.8), hi = std::min(16.0, (1 + t) * 1.25);
  for (const auto& r : c.rows) {
    if (!r.interval) continue;
    lo = std::min(lo, std::max(1.0 / 16, r.interval->low * 0.95));
    hi = std::max(hi, std::min(16.0, r.interval->high * 1.05));
  }
  constexpr int kW = 320, kH = 22;
  auto x = [&](double ratio) {
    const double r = std::clamp(ratio, lo, hi);
    return 4 + (kW - 8) * (std::log(r) - std::log(lo)) / (std::log(hi) - std::log(lo));
  };
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rung bench compare</title><style>";
  out += kCompareStyle;
  out += "</style></head><body>\n<h1>rung bench compare</h1>\n";
  auto side_line = [](const char* name, const CompareInput& in) {
    return fmt::format("<p class=\"inputs\">{}: {} ({} record{}{})</p>\n", name, html_escape(in.path.string()), in.records.size(),
                       in.records.size() == 1 ? "" : "s", in.date.empty() ? "" : ", measured " + html_escape(in.date));
  };
  out += side_line("A", c.a) + side_line("B", c.b);
  out += fmt::format(
      "<p class=\"rule\">B's median time over A's, with its {:g}% interval (unpaired). regression: the interval lies wholly above {:g}; "
      "improvement: wholly below {:g}; same: wholly within; unclear: it crosses an edge. The grey band is ±{:g}%, the dashed line 1.0; "
      "the axis is logarithmic, {} to {}.</p>\n",
      c.options.confidence * 100, 1 + t, 1 - t, t * 100, ratio_text(lo), ratio_text(hi));
  if (!c.notes.empty()) {
    out += "<ul class=\"notes\">\n";
    for (const auto& n : c.notes) out += "<li>" + html_escape(n) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<table>\n<tr><th class=\"text\">model</th><th class=\"text\">form</th><th class=\"text\">rung</th><th>A p50 ms</th><th>B p50 ms</th>"
         "<th>runs A / B</th><th>B / A</th><th>interval</th><th class=\"text\">method</th><th class=\"text\">";
  // The scale: the band's edges and 1.0 marked.
  out += fmt::format("<svg class=\"scale\" width=\"{}\" height=\"16\" viewBox=\"0 0 {} 16\">", kW, kW);
  for (double tick : {1 - t, 1.0, 1 + t}) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"12\" text-anchor=\"middle\">{:g}</text>", x(tick), tick);
    if (t == 0) break;
  }
  out += "</svg></th><th class=\"text\">verdict</th><th class=\"text\">note</th></tr>\n";
  for (const auto& r : c.rows) {
    const std::string cls = css_class(r.verdict);
    out += fmt::format("<tr class=\"row {}\"><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td>", cls, html_escape(r.model),
                       html_escape(r.form), html_escape(r.rung_display));
    auto p50 = [](const std::optional<CompareSide>& s) { return s && s->runs > 0 ? ms_text(s->p50_ms) : std::string("–"); };
    auto runs = [](const std::optional<CompareSide>& s) { return s && s->runs > 0 ? std::to_string(s->runs) : std::string("–"); };
    out += fmt::format("<td>{}</td><td>{}</td><td>{} / {}</td>", p50(r.a), p50(r.b), runs(r.a), runs(r.b));
    std::string svg;
    if (r.interval) {
      const auto& iv = *r.interval;
      out += fmt::format("<td>{:.3f}</td><td>{:.3f} – {:.3f}</td><td class=\"text\">{}</td>", iv.ratio, iv.low, iv.high, iv.method);
      svg = fmt::format("<svg class=\"ratio\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\"><title>{:.3f} ({:.3f} – {:.3f})</title>", kW,
                        kH, kW, kH, iv.ratio, iv.low, iv.high);
      svg += fmt::format("<rect class=\"band\" x=\"{:.1f}\" y=\"2\" width=\"{:.1f}\" height=\"{}\"/>", x(1 - t), std::max(0.5, x(1 + t) - x(1 - t)), kH - 4);
      svg += fmt::format("<line class=\"one\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1}\"/>", x(1), kH);
      svg += fmt::format("<rect class=\"interval {}\" x=\"{:.1f}\" y=\"7\" width=\"{:.1f}\" height=\"8\"/>", cls, x(iv.low),
                         std::max(1.5, x(iv.high) - x(iv.low)));
      svg += fmt::format("<circle class=\"point\" cx=\"{:.1f}\" cy=\"11\" r=\"3\"/></svg>", x(iv.ratio));
    } else {
      out += "<td>–</td><td>–</td><td class=\"text\">–</td>";
    }
    out += fmt::format("<td class=\"text\">{}</td><td class=\"text verdict\">{}</td><td class=\"reason\">{}</td></tr>\n", svg,
                       compare_verdict_name(r.verdict), html_escape(r.reason));
  }
  out += "</table>\n";
  out += fmt::format("<p class=\"rule\">{} regression{}, {} improvement{}, {} same, {} unclear, {} not compared, {} only in A, {} only in B</p>\n",
                     c.count(CompareVerdict::kRegression), c.count(CompareVerdict::kRegression) == 1 ? "" : "s",
                     c.count(CompareVerdict::kImprovement), c.count(CompareVerdict::kImprovement) == 1 ? "" : "s",
                     c.count(CompareVerdict::kSame), c.count(CompareVerdict::kUnclear), c.count(CompareVerdict::kNotCompared),
                     c.count(CompareVerdict::kOnlyInA), c.count(CompareVerdict::kOnlyInB));
  out += "</body></html>\n";
  return out;
}

}  // namespace rung
