#include "rung/bench_record.h"

#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <chrono>
#include <climits>
#include <nlohmann/json.hpp>

#include "os/atomic_file.h"
#include "os/file_hash.h"
#include "os/file_lock.h"
#include "os/json_input.h"
#include "rung/input_words.h"
#include "rung/json_text.h"
#include "os/read_file.h"

namespace rung {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json paired_json(const std::optional<PairedRatio>& p, const char* against) {
  if (!p) return nullptr;
  return {{"ratio", p->ratio}, {"ratio_low", p->low}, {"ratio_high", p->high}, {"pairs", p->pairs}, {"against", against},
          {"interval", "99% sign-test interval of the median of paired run ratios (the probe's speed rule)"}};
}

json row_json(const BenchRow& r) {
  const Tolerance& tol = r.tolerance;
  json j = {{"model_form", text_or_null(r.model_form)},
            {"rung", r.rung},
            {"rung_display", r.display},
            {"provider", r.provider},
            {"provider_version", text_or_null(r.provider_version)},
            {"form", r.form},
            {"model_id", r.model_id},
            {"ok", r.ok},
            {"failure_class", text_or_null(r.failure_class)},
            {"failure_reason", text_or_null(r.failure_reason)},
            {"evidence", r.evidence}};
  j["placement"] = nullptr;
  if (r.placement) {
    j["placement"] = {{"placed_nodes", r.placement->placed_nodes},
                      {"total_nodes", r.placement->total_nodes},
                      {"time_share", r.placement->time_share},
                      {"summary", r.placement->summary}};
  }
  json match = {{"verdict", output_match_name(r.match)},
                {"against", "cpu"},
                {"max_abs_diff", r.ok ? json(r.max_abs_diff) : json(nullptr)},
                {"max_rel_diff", r.ok ? json(r.max_rel_diff) : json(nullptr)},
                {"atol", tol.atol},
                {"rtol", tol.rtol},
                {"detail", text_or_null(r.match_detail)}};
  j["output_match"] = match;
  if (!r.ok) {
    j["session_build_ms"] = {{"cold", nullptr}, {"cached", nullptr}};
    j["first_inference_ms"] = nullptr;
    j["latency_ms"] = nullptr;
    j["cv"] = nullptr;
    j["high_variation"] = false;
    j["round_p50_ms"] = json::array();
    j["run_ms"] = nullptr;
    j["ratio_to_floor"] = nullptr;
    j["x_floor"] = nullptr;
    j["x_f32"] = nullptr;
    j["throughput_per_s"] = nullptr;
    j["peak_rss_mb"] = nullptr;
    j["bare_c_api_p50_ms"] = nullptr;
    return j;
  }
  j["session_build_ms"] = {{"cold", opt(r.build_cold_ms)}, {"cached", opt(r.build_cached_ms)}};
  j["first_inference_ms"] = r.first_run_ms;
  j["latency_ms"] = {{"count", r.latency.count}, {"min", r.latency.min},   {"p50", r.latency.p50},
                     {"p90", r.latency.p90},     {"p99", r.latency.p99},   {"max", r.latency.max},
                     {"mean", r.latency.mean},   {"stddev", r.latency.stddev}};
  j["cv"] = r.latency.cv;
  j["high_variation"] = r.high_variation();
  j["round_p50_ms"] = r.round_p50_ms;
  json runs = json::array();
  for (double ms : r.run_ms) runs.push_back(std::round(ms * 1e4) / 1e4);  // 0.1 µs: below any timer's noise here
  j["run_ms"] = std::move(runs);
  j["ratio_to_floor"] = opt(r.ratio_to_floor);
  j["x_floor"] = paired_json(r.x_floor, "the CPU floor, the same form");
  j["x_f32"] = paired_json(r.x_f32, "the f32 form, the same rung");
  j["throughput_per_s"] = r.throughput_per_s;
  j["peak_rss_mb"] = r.peak_rss_mb;
  j["bare_c_api_p50_ms"] = opt(r.bare_p50_ms);
  return j;
}

json measurement_json(const BenchReport& rep, const BenchModelReport& m, const std::string& command) {
  const BenchOptions& s = rep.settings;
  json rows = json::array();
  for (const auto& r : m.rows) rows.push_back(row_json(r));
  std::vector<std::string> warnings;
  for (const auto& w : rep.warnings) {
    if (w.find(" on " + m.name + ":") != std::string::npos) warnings.push_back(w);
  }
  return {{"device", rep.hardware_identity},
          {"env",
           {{"hostname", rep.hostname},
            {"os", rep.os},
            {"cpu", rep.cpu},
            {"logical_cpus", rep.logical_cpus},
            {"hardware_identity", rep.hardware_identity},
            {"runtime", {{"name", "onnxruntime"}, {"version", rep.runtime_version}, {"library", rep.runtime_library.string()}, {"api_version", rep.api_version}}},
            {"threads", s.threads}}},
          {"provenance", {{"kind", "measured"}, {"date", rep.date}, {"command", command}, {"tool", "rung " RUNG_VERSION}}},
          {"settings",
           {{"warmup", s.warmup},
            {"runs", s.duration_s > 0 ? json(nullptr) : json(s.runs)},
            {"duration_s", s.duration_s > 0 ? json(s.duration_s) : json(nullptr)},
            {"rounds", s.rounds},
            {"inputs", rep.inputs_mode},
            {"inputs_described", m.inputs_described},
            {"seed", s.seed},
            {"isolation", "one child process per rung, model and round"}}},
          {"rows", rows},
          {"warnings", warnings}};
}

// Measurements beyond this are not one model's history on a few devices.
constexpr std::size_t kMaxMeasurements = 100'000;

Result<json> parse_record(const std::string& text, const std::string& what) {
  auto parsed = parse_ordered_json(text);
  if (!parsed) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", what, parsed.error().message)};
  json& j = *parsed;
  auto text_at = [](const json& o, const char* key) { return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : ""; };
  if (text_at(j, "schema") != kBenchRecordSchema) return malformed_input(what, "a rung bench record", schema_words(j, kBenchRecordSchema));
  if (!j.contains("schema_version") || json_integer(j["schema_version"], 0, INT32_MAX) != kBenchRecordSchemaVersion) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} has schema version {}; this rung writes {}", what,
                                                          j.contains("schema_version") ? json_text(j["schema_version"]).substr(0, 40) : "none",
                                                          kBenchRecordSchemaVersion)};
  }
  if (!j.contains("measurements") || !j["measurements"].is_array() || !j.contains("model") || !j["model"].is_object()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} lacks its model or measurements", what)};
  }
  if (j["measurements"].size() > kMaxMeasurements) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} holds {} measurements, more than {}", what, j["measurements"].size(), kMaxMeasurements)};
  }
  const std::string sha = text_at(j["model"], "sha256");
  if (sha.size() != 64 || sha.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} names its model file by no SHA-256", what)};
  }
  return std::move(j);
}

// "the existing record is of another model file (...)" when the SHA-256s differ.
Status same_model(const json& record, const std::string& sha256, const std::string& file) {
  const std::string have = record["model"]["sha256"];
  if (have == sha256) return {};
  const std::string named = record["model"].contains("file") && record["model"]["file"].is_string() ? record["model"]["file"].get<std::string>() : "?";
  return Error{ErrorCode::kInvalidArgument, fmt::format("the existing record is of another model file ({} sha256 {}…, this one {} {}…); not appended",
                                                        named, have.substr(0, 12), file, sha256.substr(0, 12))};
}

}  // namespace

// Here rather than in bench.cpp: the record is where the verdict is written, and
// the record reader (fuzzed on its own) needs it without the engine.
const char* output_match_name(OutputMatch m) {
  switch (m) {
    case OutputMatch::kReference: return "reference";
    case OutputMatch::kMatch: return "match";
    case OutputMatch::kMismatch: return "mismatch";
    case OutputMatch::kNotCompared: return "not compared";
  }
  return "?";
}

json forms_json(const BenchModelReport& m) {
  json forms = json::array();
  for (const auto& f : m.forms) {
    forms.push_back({{"label", f.label},
                     {"file", f.path.filename().string()},
                     {"sha256", f.sha256},
                     {"stable_sha256", f.stable_sha256},
                     {"size_bytes", f.size_bytes},
                     {"form", f.form},
                     {"form_evidence", f.form_evidence},
                     {"model_id", f.model_id},
                     {"opset", f.opset},
                     {"nodes", f.nodes},
                     {"inputs_described", f.inputs_described}});
  }
  return forms;
}

json record_document(const BenchReport& report, const BenchModelReport& m, const std::string& command) {
  json j = {{"schema", kBenchRecordSchema},
            {"schema_version", kBenchRecordSchemaVersion},
            {"model",
             {{"name", m.name},
              {"file", m.path.filename().string()},
              {"sha256", m.sha256},
              {"stable_sha256", m.stable_sha256},
              {"size_bytes", m.size_bytes},
              {"form", m.form},
              {"form_evidence", m.form_evidence},
              {"model_id", m.model_id},
              {"opset", m.opset},
              {"nodes", m.nodes}}},
            {"measurements", json::array({measurement_json(report, m, command)})}};
  // The model's forms (files); "model" above is the first of them. A measurement's rows name their form.
  if (!m.forms.empty()) j["model"]["forms"] = forms_json(m);
  return j;
}

std::string bench_record_json(const BenchReport& report, const BenchModelReport& m, const std::string& command) {
  return json_text(record_document(report, m, command), 2) + "\n";
}

std::string bench_records_json(const BenchReport& report, const std::string& command) {
  json all = json::array();
  for (const auto& m : report.models) all.push_back(record_document(report, m, command));
  return json_text(json{{"schema", "rung-bench-records"}, {"schema_version", 1}, {"records", std::move(all)}}, 2) + "\n";
}

namespace {

// RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(double v) { return fmt::format("{:.6g}", v); }
std::string number(const std::optional<double>& v) { return v ? number(*v) : ""; }

}  // namespace

std::string bench_csv(const BenchReport& report) {
  const std::vector<std::string> header = {"model", "form", "file", "rung", "rung_display", "provider", "build", "model_id", "ok",
                                           "build_cold_ms", "build_cached_ms", "first_ms", "p50_ms", "p90_ms", "p99_ms", "cv",
                                           "x_floor", "x_floor_low", "x_floor_high", "x_f32", "x_f32_low", "x_f32_high",
                                           "placed_nodes", "total_nodes", "placed_time_share", "verdict", "reason"};
  std::string out;
  auto line = [&](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
    out += "\r\n";
  };
  line(header);
  for (const auto& m : report.models) {
    for (const auto& r : m.rows) {
      std::string file;
      for (const auto& f : m.forms) {
        if (f.label == r.model_form) file = f.path.filename().string();
      }
      auto ratio = [](const std::optional<PairedRatio>& p, int which) {
        if (!p) return std::string();
        return number(which == 0 ? p->ratio : which == 1 ? p->low : p->high);
      };
      const std::string reason = r.ok ? (r.match == OutputMatch::kMismatch ? r.match_detail : "") : r.failure_class + ": " + r.failure_reason;
      line({m.name, r.model_form, file, r.rung, r.display, r.provider, report.runtime_version, r.model_id, r.ok ? "true" : "false",
            r.ok ? number(r.build_cold_ms) : "", r.ok ? number(r.build_cached_ms) : "", r.ok ? number(r.first_run_ms) : "",
            r.ok ? number(r.latency.p50) : "", r.ok ? number(r.latency.p90) : "", r.ok ? number(r.latency.p99) : "",
            r.ok ? number(r.latency.cv) : "", ratio(r.x_floor, 0), ratio(r.x_floor, 1), ratio(r.x_floor, 2), ratio(r.x_f32, 0),
            ratio(r.x_f32, 1), ratio(r.x_f32, 2), r.placement ? std::to_string(r.placement->placed_nodes) : "",
            r.placement ? std::to_string(r.placement->total_nodes) : "", r.placement ? number(r.placement->time_share) : "",
            r.ok ? output_match_name(r.match) : "failed", reason});
    }
  }
  return out;
}

Result<std::string> merge_bench_records(const std::string& existing, const std::string& addition) {
  auto a = parse_record(existing, "the existing record");
  if (!a) return a.error();
  auto b = parse_record(addition, "the new record");
  if (!b) return b.error();
  const std::string file_b = (*b)["model"].contains("file") && (*b)["model"]["file"].is_string() ? (*b)["model"]["file"].get<std::string>() : "?";
  RUNG_RETURN_IF_ERROR(same_model(*a, (*b)["model"]["sha256"], file_b));
  for (const auto& m : (*b)["measurements"]) (*a)["measurements"].push_back(m);
  return json_text(*a, 2) + "\n";
}

Result<std::vector<fs::path>> bench_record_paths(const fs::path& target, const std::vector<std::string>& names) {
  std::error_code ec;
  std::vector<fs::path> out;
  if (names.size() == 1 && !fs::is_directory(target, ec)) {
    out.push_back(target);
    return out;
  }
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("--json {}: with {} models this must be a directory (one record per model)", target.string(), names.size())};
  }
  for (const auto& n : names) out.push_back(target / (n + ".json"));
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (out[i] == out[k]) return Error{ErrorCode::kInvalidArgument, fmt::format("two models are named '{}'; name them NAME=PATH", names[i])};
    }
  }
  return out;
}

Status check_bench_record_target(const fs::path& file, const fs::path& model) {
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) return Error{ErrorCode::kInvalidArgument, fmt::format("{} is not a directory", dir.string())};
    return {};
  }
  if (!fs::is_regular_file(file, ec)) return Error{ErrorCode::kInvalidArgument, fmt::format("{} is not a file", file.string())};
  auto text = read_input_file(file, FileKind::kDocument);
  if (!text) return text.error();
  auto r = parse_record(*text, file.string());
  if (!r) return Error{ErrorCode::kInvalidArgument, r.error().message + "; it would not be appended to (move it away or choose another path)"};
  auto sha = sha256_of_file(model);
  if (!sha) return sha.error();
  if (auto s = same_model(*r, *sha, model.filename().string()); !s) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: {}", file.string(), s.error().message)};
  }
  return {};
}

namespace {

// Bench records are read, merged and rewritten: two benches appending to one
// record at once would each write what they read, and one measurement would be
// lost. Each record is updated under a lock on ".NAME.lock" beside it, kept
// there (removing it would race with a waiter that opened it), taken in path
// order so that two benches with the same records in another order cannot wait
// for each other.
constexpr std::chrono::minutes kRecordLockWait{2};

fs::path record_lock_file(const fs::path& record) { return record.parent_path() / ("." + record.filename().string() + ".lock"); }

}  // namespace

Status write_bench_records(const BenchReport& report, const std::vector<fs::path>& files, const std::string& command) {
  if (files.size() != report.models.size()) return Error{ErrorCode::kInvalidArgument, "one record path per model is needed"};
  std::vector<fs::path> by_path = files;
  std::sort(by_path.begin(), by_path.end());
  std::vector<CacheLock> locks;
  for (const auto& f : by_path) {
    std::error_code ec;
    if (!f.parent_path().empty()) fs::create_directories(f.parent_path(), ec);
    auto lock = CacheLock::acquire(record_lock_file(f), kRecordLockWait);
    if (!lock) return Error{lock.error().code, fmt::format("{}: not appended to: {}", f.string(), lock.error().message)};
    locks.push_back(std::move(*lock));
  }
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string text = bench_record_json(report, report.models[i], command);
    std::error_code ec;
    if (fs::exists(files[i], ec)) {
      auto existing = read_input_file(files[i], FileKind::kDocument);
      if (!existing) return existing.error();
      auto merged = merge_bench_records(*existing, text);
      if (!merged) return Error{merged.error().code, fmt::format("{}: {}", files[i].string(), merged.error().message)};
      text = std::move(*merged);
    }
    texts.push_back(std::move(text));
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    RUNG_RETURN_IF_ERROR(write_file_atomically(files[i], texts[i]));
  }
  return {};
}

}  // namespace rung
