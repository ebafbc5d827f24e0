#include "registry/records.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "os/file_hash.h"
#include "os/json_input.h"

namespace rung::registry {
namespace {
using json = nlohmann::json;

constexpr const char* kBenchSchema = "rung-bench-record";
constexpr int kOldestBenchVersion = 1, kNewestBenchVersion = 2;  // 2 added model.stable_sha256

std::string short_hash(const std::string& h) { return h.empty() ? "(none)" : h.substr(0, 12) + "…"; }

std::optional<double> number_or_none(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

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
    return fmt::format("{} measured on ORT {}, release targets {}", what, runtime, r.environment.runtime_version);
  }
  if (device != r.environment.device) return fmt::format("{} measured on device '{}', release targets '{}'", what, device, r.environment.device);
  return {};
}

Result<json> parse_bench_record(const std::string& text, const std::string& what) {
  json j = parse_json_or_discarded(text);
  if (!j.is_object() || !j.contains("schema") || j["schema"] != kBenchSchema) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is not a rung bench record", what)};
  }
  const json& v = j.contains("schema_version") ? j["schema_version"] : json();
  if (!json_integer(v, kOldestBenchVersion, kNewestBenchVersion)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is a bench record of schema version {}; the registry reads versions {} to {}", what,
                                                          v.is_null() ? "none" : v.dump(), kOldestBenchVersion, kNewestBenchVersion)};
  }
  if (!j.contains("model") || !j["model"].is_object() || !j.contains("measurements") || !j["measurements"].is_array()) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} lacks its model or measurements", what)};
  }
  return j;
}

std::vector<MeasurementRow> rows_of(const json& model, const json& m) {
  std::vector<MeasurementRow> out;
  MeasurementRow base;
  base.model_name = model.at("name").get<std::string>();
  base.model_sha256 = model.at("sha256").get<std::string>();
  base.model_stable_sha256 = model.value("stable_sha256", "");
  // nlohmann::json sorts keys: the digest does not depend on how the file was laid out.
  base.digest = sha256_hex(base.model_sha256 + "\n" + m.dump());
  base.device = m.at("device").get<std::string>();
  base.hostname = m.at("env").at("hostname").get<std::string>();
  base.runtime_version = m.at("env").at("runtime").at("version").get<std::string>();
  base.measured_at = m.at("provenance").at("date").get<std::string>();
  for (const auto& r : m.at("rows")) {
    MeasurementRow row = base;
    row.rung = r.at("rung").get<std::string>();
    row.model_id = r.at("model_id").get<std::string>();
    row.ok = r.at("ok").get<bool>();
    if (row.ok && r.at("latency_ms").is_object()) row.p50_ms = number_or_none(r["latency_ms"], "p50");
    row.output_match = r.at("output_match").at("verdict").get<std::string>();
    row.max_abs_diff = number_or_none(r["output_match"], "max_abs_diff");
    if (r.at("failure_class").is_string()) row.failure_class = r["failure_class"].get<std::string>();
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
  return counts.dump();
}

std::string precision_json(const PrecisionEvidence& p) {
  switch (p.kind) {
    case PrecisionEvidence::Kind::kOpaque: return json("opaque: " + p.opaque_why).dump();
    case PrecisionEvidence::Kind::kInitializers: return json{{"initializers", json::parse(precision_detail(p))}}.dump();
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
  for (const auto& [type, c] : counts.items()) {
    const auto count = [&c](const char* key) { return c.is_object() && c.contains(key) && c[key].is_number_unsigned() ? c[key].get<std::uint64_t>() : 0; };
    p.by_type[type] = {count("tensors"), count("elements")};
  }
  return p;
}

Result<std::vector<MeasurementRow>> measurement_rows(const std::string& text, const std::string& what) {
  auto j = parse_bench_record(text, what);
  if (!j) return j.error();
  try {
    std::vector<MeasurementRow> out;
    for (const auto& m : (*j)["measurements"]) {
      for (auto& r : rows_of((*j)["model"], m)) out.push_back(std::move(r));
    }
    return out;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a measurement lacks what the bench record schema requires ({})", what, e.what())};
  }
}

Result<CheckedEvidence> check_bench_record(const Release& release, const EvidenceFile& file) {
  const std::string what = fmt::format("bench record {}", file.path.string());
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
    for (const auto& m : record["measurements"]) {
      const std::string why = environment_mismatch(what, m.at("env").at("runtime").at("version").get<std::string>(), m.at("device").get<std::string>(),
                                                   release);
      if (!why.empty()) {
        if (first_mismatch.empty()) first_mismatch = why;
        continue;
      }
      kept.push_back(m);
      for (auto& r : rows_of(model, m)) {
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
                                fmt::join(rungs_seen, ", "));
      return out;
    }
    record["measurements"] = kept;
    out.evidence.kind = "bench";
    out.evidence.document = record.dump();
    out.evidence.sha256 = sha256_hex(out.evidence.document);
    out.evidence.summary = bench_summary(out.measurements, release.target.rung, kept.size());
    out.accepted = true;
    return out;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: lacks what the bench record schema requires ({})", what, e.what())};
  }
}

Result<CheckedEvidence> check_parity_report(const Release& release, const EvidenceFile& file) {
  const std::string what = fmt::format("parity report {}", file.path.string());
  json report = parse_json_or_discarded(file.text);
  if (report.is_discarded() || !report.is_object() || !report.contains("gates") || !report.contains("passed")) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is not a rung parity report (--json)", what)};
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
      out.refusal = fmt::format("{} ran its candidate on rung '{}', release targets '{}'", what, rung, release.target.rung);
      return out;
    }
    const json& ref = report["sides"].at("ref");
    const bool passed = report["passed"].get<bool>();
    out.evidence.kind = "parity";
    out.evidence.document = report.dump();
    out.evidence.sha256 = sha256_hex(out.evidence.document);
    out.evidence.summary = fmt::format("parity {} · {} gate{} over {} input{} · against {} on ORT {}", passed ? "PASS" : "FAIL",
                                       report["gates"].size(), report["gates"].size() == 1 ? "" : "s", report.value("inputs", 0),
                                       report.value("inputs", 0) == 1 ? "" : "s", ref.at("rung").get<std::string>(),
                                       ref.at("runtime").at("version").get<std::string>());
    out.accepted = true;
    return out;
  } catch (const json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: its sides lack what rung parity writes ({})", what, e.what())};
  }
}

}  // namespace rung::registry
