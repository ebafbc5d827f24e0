// What the registry reads from the documents it is given: bench records (any
// schema version it knows) and parity reports, checked against a release's
// target, and the rows of the fleet's measurements.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/registry.h"
#include "rung/result.h"

namespace rung::registry {

// A text the registry stores and prints (a name, a device, a reason): at most
// `max_bytes`, UTF-8, no control characters (rung/printable.h). The error
// (kInvalidArgument) names `field`: "the version (--version) holds a control character (\x1b at byte 3)".
Status check_stored_text(const std::string& field, const std::string& value, std::size_t max_bytes);

// A document's size against its kind's limit (kRegistryLimits): "bench record b.json is 16777217
// bytes; the registry takes a bench record of at most 16.0 MiB (16777216 bytes)". `what` names it.
Status check_document_size(RegistryDocument kind, const std::string& what, std::uint64_t bytes);
const char* document_kind_name(RegistryDocument kind);  // "recipe", "bench record", "parity report"
std::uint64_t document_limit(RegistryDocument kind);

// "retained" or "not retained: <why>".
std::string retention_text(const ReleaseArtifact& a);

// The precision evidence as JSON text: an object of counts by element type,
// the string "opaque: <why>", or null (not inspected). And back.
std::string precision_json(const PrecisionEvidence& p);
// For the database's two columns: kind ("not inspected", "initializers", "opaque") and detail.
const char* precision_kind_name(PrecisionEvidence::Kind k);
std::string precision_detail(const PrecisionEvidence& p);
Result<PrecisionEvidence> precision_from_columns(const std::string& kind, const std::string& detail);

// The mark of a release registered although its recipe's gates failed, for the
// database's column: JSON {"decision": ..., "failed": [...]}, "" when unmarked
// (NULL). And back: a column another tool wrote that is not that object still
// marks the release, its text the one failing gate.
std::string gate_failed_column(const std::optional<RecipeGates>& mark);
std::optional<RecipeGates> gate_failed_from_column(const std::string& column, bool is_null);
// "classification · y (decision: forced)": for messages and `show`.
std::string gate_failed_text(const RecipeGates& gates);

// One rung of one bench measurement: a row of the fleet's table.
struct MeasurementRow {
  std::string digest;  // SHA-256 of the measurement and its model's hash: importing twice adds nothing
  std::string model_name, model_sha256, model_stable_sha256, model_id;
  std::string device, hostname, runtime_version, measured_at;
  std::string rung;
  bool ok = false;
  std::optional<double> p50_ms, max_abs_diff;
  std::string output_match, failure_class;
};

// Every rung of every measurement of a bench record, or why the text is not one.
Result<std::vector<MeasurementRow>> measurement_rows(const std::string& record_text, const std::string& what);

// A document offered as evidence for a release: accepted (with what to store)
// or refused with the reason. An Error when the document is not one at all.
struct CheckedEvidence {
  bool accepted = false;
  std::string refusal;
  ReleaseEvidence evidence;
  std::vector<MeasurementRow> measurements;  // a bench record's, for the fleet's table
};

Result<CheckedEvidence> check_bench_record(const Release& release, const EvidenceFile& file);
Result<CheckedEvidence> check_parity_report(const Release& release, const EvidenceFile& file);

}  // namespace rung::registry
