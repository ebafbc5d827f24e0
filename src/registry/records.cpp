#include "registry/records.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <limits>
#include <set>
#include <tuple>

#include "rung/json_text.h"
#include "rung/printable.h"
#include "os/file_hash.h"
#include "os/json_input.h"
#include "rung/input_words.h"
#include "os/read_file.h"

namespace rung::registry {
namespace {
using json = nlohmann::json;

constexpr const char* kBenchSchema = "rung-bench-record";
constexpr int kOldestBenchVersion = 1, kNewestBenchVersion = 2;  // 2 added model.stable_sha256

std::string short_hash(const std::string& h) { return h.empty() ? "(none)" : printable(h, 12) + (h.size() > 12 ? "…" : ""); }

// A document's text in a message: escaped and short (it may be anything).
std::string shown(const std::string& text) { return printable(text, 80); }

// A figure a record carries into the registry: absent or null is "not measured"; anything else must be a
// number in [low, high] (a p50 of "x", -1 or 1e300 is a damaged record, refused by name, never stored).
Result<std::optional<double>> figure(const json& j, const char* key, double low, bool low_inclusive, double high, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::optional<double>{};
  const json& v = j[key];
  const double x = v.is_number() ? v.get<double>() : 0.0;
  if (!v.is_number() || !(low_inclusive ? x >= low : x > low) || !(x <= high)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is {}: expected a number {} {:g} and at most {:g}", where,
                                                          printable(json_text(v), 40), low_inclusive ? "from" : "above", low, high)};
  }
  return std::optional<double>{x};
}

// One day: no single run of a model a device ships is slower and still measured.
constexpr double kLongestRunMs = 86'400'000.0;

// Whether a document's model is the release's artifact: the same bytes, or the
// same graph (the stable hashes agree when only doc strings differ).
bool same_model(const ReleaseArtifact& a, const std::string& sha256, const std::string& stable) {
  return sha256 == a.sha256 || (!stable.empty() && stable == a.stable_sha256);
}

std::string model_mismatch(const std::string& what, const std::string& sha256, const ReleaseArtifact& a) {
  return fmt::format("{} is of another model (sha256 {}); the release's artifact is sha256 {}", what, short_hash(sha256), short_hash(a.sha256));
}

// Where a document was measured against where the release runs, or "" when they agree.
std::string environment_mismatch(const std::string& what, const std::string& runtime, const std::string& device, const Release& r) {
  if (runtime != r.environment.runtime_version) {
    return fmt::format("{} measured on ORT {}, release targets {}", what, shown(runtime), r.environment.runtime_version);
  }
  if (device != r.environment.device) {
    return fmt::format("{} measured on device '{}', release targets '{}'", what, shown(device), r.environment.device);
  }
  return {};
}

Result<json> parse_bench_record(const std::string& text, const std::string& what) {
  RUNG_RETURN_IF_ERROR(check_document_size(RegistryDocument::kBenchRecord, what, text.size()));
  auto parsed = parse_json(text);
  if (!parsed) return Error{parsed.error().code, fmt::format("{}: {}", what, parsed.error().message)};  // "not valid JSON: ..."
  json j = std::move(*parsed);
  if (!j.is_object() || !j.contains("schema") || j["schema"] != kBenchSchema) return malformed_input(what, "a rung bench record", schema_words(j, kBenchSchema));
  const json& v = j.contains("schema_version") ? j["schema_version"] : json();
  if (!json_integer(v, kOldestBenchVersion, kNewestBenchVersion)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is a bench record of schema version {}; the registry reads versions {} to {}", what,
                                                          v.is_null() ? "none" : json_text(v), kOldestBenchVersion, kNewestBenchVersion)};
  }
  if (!j.contains("model") || !j["model"].is_object() || !j.contains("measurements") || !j["measurements"].is_array()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} lacks its model or measurements", what)};
  }
  return j;
}

// The rows of one measurement, its text fields checked (before they are copied
// into every row) and its rows counted against what is left of the limit.
// A value of the wrong kind throws json::exception, for the caller to name.
Result<std::vector<MeasurementRow>> rows_of(const json& model, const json& m, const std::string& where, std::size_t& rows_left) {
  std::vector<MeasurementRow> out;
  MeasurementRow base;
  base.model_name = model.at("name").get<std::string>();
  base.model_sha256 = model.at("sha256").get<std::string>();
  base.model_stable_sha256 = model.value("stable_sha256", "");
  base.device = m.at("device").get<std::string>();
  base.hostname = m.at("env").at("hostname").get<std::string>();
  base.runtime_version = m.at("env").at("runtime").at("version").get<std::string>();
  base.measured_at = m.at("provenance").at("date").get<std::string>();
  const auto name = kRegistryLimits.name_bytes, text = kRegistryLimits.text_bytes;
  for (const auto& [field, value, limit] : {std::tuple{"model.name", &base.model_name, name}, {"model.sha256", &base.model_sha256, name},
                                            {"model.stable_sha256", &base.model_stable_sha256, name}, {"device", &base.device, text},
                                            {"env.hostname", &base.hostname, text}, {"env.runtime.version", &base.runtime_version, name},
                                            {"provenance.date", &base.measured_at, name}}) {
    RUNG_RETURN_IF_ERROR(check_stored_text(fmt::format("{}: '{}'", where, field), *value, limit));
  }
  const json& rows = m.at("rows");
  if (!rows.is_array()) throw json::type_error::create(302, "rows must be a list", &rows);
  if (rows.size() > rows_left) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: more rows than the registry takes at once ({} in all): split the records",
                                                          where, kRegistryLimits.measurement_rows)};
  }
  rows_left -= rows.size();
  // nlohmann::json sorts keys: the digest does not depend on how the file was laid out.
  base.digest = sha256_hex(base.model_sha256 + "\n" + json_text(m));
  for (const auto& r : rows) {
    MeasurementRow row = base;
    row.rung = r.at("rung").get<std::string>();
    row.model_id = r.at("model_id").get<std::string>();
    row.ok = r.at("ok").get<bool>();
    if (row.ok && r.at("latency_ms").is_object()) {
      auto p50 = figure(r["latency_ms"], "p50", 0.0, false, kLongestRunMs, fmt::format("{}: rung {}'s 'latency_ms.p50'", where, printable(row.rung, 80)));
      if (!p50) return p50.error();
      if (!*p50) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: rung {} ran but its 'latency_ms' has no p50", where, printable(row.rung, 80))};
      row.p50_ms = *p50;
    }
    row.output_match = r.at("output_match").at("verdict").get<std::string>();
    auto diff = figure(r["output_match"], "max_abs_diff", 0.0, true, std::numeric_limits<double>::max(),
                       fmt::format("{}: rung {}'s 'output_match.max_abs_diff'", where, printable(row.rung, 80)));
    if (!diff) return diff.error();
    row.max_abs_diff = *diff;
    if (r.at("failure_class").is_string()) row.failure_class = r["failure_class"].get<std::string>();
    for (const auto& [field, value] : {std::pair{"rung", &row.rung}, {"model_id", &row.model_id}, {"output_match.verdict", &row.output_match},
                                       {"failure_class", &row.failure_class}}) {
      if (auto s = check_stored_text(fmt::format("{}: a row's '{}'", where, field), *value, name); !s) return s.error();
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string bench_summary(const std::vector<MeasurementRow>& rows, const std::string& rung, std::size_t measurements) {
  const MeasurementRow* latest = nullptr;
  for (const auto& r : rows) {
    if (r.rung == rung && (latest == nullptr || r.measured_at >= latest->measured_at)) latest = &r;
  }
  std::string figures = !latest->ok        ? fmt::format("failed ({})", latest->failure_class)
                        : latest->p50_ms   ? fmt::format("p50 {:.4g} ms, output {}", *latest->p50_ms, latest->output_match)
                                           : fmt::format("output {}", latest->output_match);
  return fmt::format("bench {} · {} measurement{} · {}: {}", latest->measured_at, measurements, measurements == 1 ? "" : "s", rung, figures);
}

}  // namespace

Status check_stored_text(const std::string& field, const std::string& value, std::size_t max_bytes) {
  if (value.size() > max_bytes) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is {} bytes; the registry stores at most {} ('{}')", field, value.size(), max_bytes,
                                                          printable(value, 40))};
  }
  if (auto why = unprintable_why(value); !why.empty()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} {} ('{}')", field, why, printable(value, 80))};
  }
  return {};
}

const char* document_kind_name(RegistryDocument kind) {
  switch (kind) {
    case RegistryDocument::kRecipe: return "recipe";
    case RegistryDocument::kBenchRecord: return "bench record";
    case RegistryDocument::kParityReport: return "parity report";
  }
  return "document";
}

std::uint64_t document_limit(RegistryDocument kind) {
  switch (kind) {
    case RegistryDocument::kRecipe: return kRegistryLimits.recipe_bytes;
    case RegistryDocument::kBenchRecord: return kRegistryLimits.bench_record_bytes;
    case RegistryDocument::kParityReport: return kRegistryLimits.parity_report_bytes;
  }
  return 0;
}

Status check_document_size(RegistryDocument kind, const std::string& what, std::uint64_t bytes) {
  const std::uint64_t limit = document_limit(kind);
  if (bytes <= limit) return {};
  return Error{ErrorCode::kInvalidArgument, fmt::format("{} is {} bytes; the registry takes a {} of at most {} ({} bytes)", what, bytes,
                                                        document_kind_name(kind), byte_size_text(limit), limit)};
}

std::string retention_text(const ReleaseArtifact& a) { return a.retained ? "retained" : "not retained: " + a.not_retained_reason; }

const char* precision_kind_name(PrecisionEvidence::Kind k) {
  switch (k) {
    case PrecisionEvidence::Kind::kInitializers: return "initializers";
    case PrecisionEvidence::Kind::kOpaque: return "opaque";
    case PrecisionEvidence::Kind::kNotInspected: break;
  }
  return "not inspected";
}

std::string precision_detail(const PrecisionEvidence& p) {
  if (p.kind == PrecisionEvidence::Kind::kOpaque) return p.opaque_why;
  if (p.kind == PrecisionEvidence::Kind::kNotInspected) return {};
  json counts = json::object();
  for (const auto& [type, c] : p.by_type) counts[type] = {{"tensors", c.tensors}, {"elements", c.elements}};
  return json_text(counts);
}

std::string precision_json(const PrecisionEvidence& p) {
  switch (p.kind) {
    case PrecisionEvidence::Kind::kOpaque: return json_text(json("opaque: " + p.opaque_why));
    case PrecisionEvidence::Kind::kInitializers: return json_text(json{{"initializers", parse_json_or(precision_detail(p), json::object())}});
    case PrecisionEvidence::Kind::kNotInspected: break;
  }
  return "null";
}

Result<PrecisionEvidence> precision_from_columns(const std::string& kind, const std::string& detail) {
  PrecisionEvidence p;
  if (kind == "not inspected") return p;
  if (kind == "opaque") {
    p.kind = PrecisionEvidence::Kind::kOpaque;
    p.opaque_why = detail;
    return p;
  }
  if (kind != "initializers") return Error{ErrorCode::kInvalidArgument, fmt::format("unknown precision evidence '{}'", kind)};
  p.kind = PrecisionEvidence::Kind::kInitializers;
  json counts = parse_json_or_discarded(detail);
  if (!counts.is_object()) return Error{ErrorCode::kInvalidArgument, "precision counts are not a JSON object"};
  for (const auto& item : counts.items()) {
    const json& c = item.value();  // not a structured binding: clang 14 (the fuzzers') cannot capture one
    const auto count = [&c](const char* key) { return c.is_object() && c.contains(key) && c[key].is_number_unsigned() ? c[key].get<std::uint64_t>() : 0; };
    p.by_type[item.key()] = {count("tensors"), count("elements")};
  }
  return p;
}

std::string gate_failed_column(const std::optional<RecipeGates>& mark) {
  if (!mark) return {};
  return json_text(json{{"decision", mark->decision}, {"failed", mark->failed}});
}

std::optional<RecipeGates> gate_failed_from_column(const std::string& column, bool is_null) {
  if (is_null) return std::nullopt;
  RecipeGates out;
  const json j = parse_json_or_discarded(column);
  const auto failed = j.is_object() ? j.find("failed") : j.end();
  if (failed == j.end() || !failed->is_array()) {
    out.failed = {column};
    return out;
  }
  out.decision = json_string_or(j, "decision", "");
  for (const auto& f : *failed) out.failed.push_back(f.is_string() ? f.get<std::string>() : json_text(f));
  return out;
}

std::string gate_failed_text(const RecipeGates& gates) {
  return fmt::format("{} (decision: {})", gates.failed.empty() ? std::string("no gate named") : fmt::format("{}", fmt::join(gates.failed, ", ")),
                     gates.decision.empty() ? "none" : gates.decision);
}

Result<std::vector<MeasurementRow>> measurement_rows(const std::string& text, const std::string& what) {
  auto j = parse_bench_record(text, what);
  if (!j) return j.error();
  try {
    std::vector<MeasurementRow> out;
    std::size_t rows_left = kRegistryLimits.measurement_rows, index = 0;
    for (const auto& m : (*j)["measurements"]) {
      auto rows = rows_of((*j)["model"], m, fmt::format("{}: measurement {}", what, ++index), rows_left);
      if (!rows) return rows.error();
      for (auto& r : *rows) out.push_back(std::move(r));
    }
    return out;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a measurement lacks what the bench record schema requires ({})", what, json_error_words(e))};
  }
}

Result<CheckedEvidence> check_bench_record(const Release& release, const EvidenceFile& file) {
  const std::string what = fmt::format("bench record {}", printable(file.path.string()));
  auto parsed = parse_bench_record(file.text, what);
  if (!parsed) return parsed.error();
  json record = std::move(*parsed);
  CheckedEvidence out;
  try {
    const json& model = record["model"];
    if (!same_model(release.artifact, model.at("sha256").get<std::string>(), model.value("stable_sha256", ""))) {
      out.refusal = model_mismatch(what, model["sha256"].get<std::string>(), release.artifact);
      return out;
    }
    // Only the measurements made where the release runs are its evidence.
    json kept = json::array();
    std::string first_mismatch;
    std::set<std::string> rungs_seen;
    std::size_t rows_left = kRegistryLimits.measurement_rows, index = 0;
    for (const auto& m : record["measurements"]) {
      ++index;
      const std::string why = environment_mismatch(what, m.at("env").at("runtime").at("version").get<std::string>(), m.at("device").get<std::string>(),
                                                   release);
      if (!why.empty()) {
        if (first_mismatch.empty()) first_mismatch = why;
        continue;
      }
      auto rows = rows_of(model, m, fmt::format("{}: measurement {}", what, index), rows_left);
      if (!rows) return rows.error();
      kept.push_back(m);
      for (auto& r : *rows) {
        rungs_seen.insert(r.rung);
        out.measurements.push_back(std::move(r));
      }
    }
    if (kept.empty()) {
      out.refusal = first_mismatch.empty() ? fmt::format("{} holds no measurement", what) : first_mismatch;
      return out;
    }
    if (!rungs_seen.count(release.target.rung)) {
      out.refusal = fmt::format("{} has no row for rung '{}', the release's target (it measured {})", what, release.target.rung,
                                shown(fmt::format("{}", fmt::join(rungs_seen, ", "))));
      return out;
    }
    record["measurements"] = kept;
    out.evidence.kind = "bench";
    out.evidence.document = json_text(record);
    out.evidence.sha256 = sha256_hex(out.evidence.document);
    out.evidence.summary = bench_summary(out.measurements, release.target.rung, kept.size());
    out.accepted = true;
    return out;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: lacks what the bench record schema requires ({})", what, json_error_words(e))};
  }
}

Result<CheckedEvidence> check_parity_report(const Release& release, const EvidenceFile& file) {
  const std::string what = fmt::format("parity report {}", printable(file.path.string()));
  RUNG_RETURN_IF_ERROR(check_document_size(RegistryDocument::kParityReport, what, file.text.size()));
  json report = parse_json_or_discarded(file.text);
  if (report.is_discarded() || !report.is_object() || !report.contains("gates") || !report.contains("passed")) {
    return malformed_input(what, "a rung parity report", "it lacks \"gates\" or \"passed\" (rung parity --json writes one)");
  }
  if (!report.contains("sides") || !report["sides"].is_object() || !report["sides"].contains("cand")) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{} does not say where it was measured (no \"sides\"; an older rung wrote it): run rung parity again", what)};
  }
  CheckedEvidence out;
  try {
    const json& cand = report["sides"]["cand"];
    if (!same_model(release.artifact, cand.at("model_sha256").get<std::string>(), cand.value("model_stable_sha256", ""))) {
      out.refusal = model_mismatch(what + " (its candidate)", cand["model_sha256"].get<std::string>(), release.artifact);
      return out;
    }
    out.refusal = environment_mismatch(what, cand.at("runtime").at("version").get<std::string>(), cand.at("device").get<std::string>(), release);
    if (!out.refusal.empty()) return out;
    const std::string rung = cand.at("rung").get<std::string>();
    if (rung != release.target.rung) {
      out.refusal = fmt::format("{} ran its candidate on rung '{}', release targets '{}'", what, shown(rung), release.target.rung);
      return out;
    }
    const json& ref = report["sides"].at("ref");
    const bool passed = report["passed"].get<bool>();
    const std::string ref_rung = ref.at("rung").get<std::string>(), ref_runtime = ref.at("runtime").at("version").get<std::string>();
    for (const auto& [field, value] : {std::pair{"sides.ref.rung", &ref_rung}, {"sides.ref.runtime.version", &ref_runtime}}) {
      RUNG_RETURN_IF_ERROR(check_stored_text(fmt::format("{}: '{}'", what, field), *value, kRegistryLimits.name_bytes));
    }
    out.evidence.kind = "parity";
    out.evidence.document = json_text(report);
    out.evidence.sha256 = sha256_hex(out.evidence.document);
    out.evidence.summary = fmt::format("parity {} · {} gate{} over {} input{} · against {} on ORT {}", passed ? "PASS" : "FAIL",
                                       report["gates"].size(), report["gates"].size() == 1 ? "" : "s", report.value("inputs", 0),
                                       report.value("inputs", 0) == 1 ? "" : "s", ref_rung, ref_runtime);
    out.accepted = true;
    return out;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: its sides lack what rung parity writes ({})", what, json_error_words(e))};
  }
}

}  // namespace rung::registry
