// The registry on either database: adding a release with its evidence,
// listing, finding, verifying artifacts, importing bench records, the fleet view.
#include "rung/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "rung/json_text.h"
#include "rung/printable.h"
#include "graph/stable_hash.h"
#include "os/file_hash.h"
#include "os/json_input.h"
#include "os/read_file.h"
#include "registry/database.h"
#include "registry/records.h"

namespace rung {
namespace fs = std::filesystem;
using registry::as_int;
using registry::as_real;
using registry::as_text;
using registry::is_null;
using registry::MeasurementRow;
using registry::Row;

struct Registry::Impl {
  std::unique_ptr<registry::Database> db;
};

namespace {

constexpr const char* kReleaseColumns =
    "id, model, version, device_class, rung, artifact_path, artifact_sha256, artifact_stable_sha256, artifact_size, retained, "
    "not_retained_reason, recipe, runtime_version, device, providers, cache_sha256, cache_file, precision_kind, precision_detail, "
    "registered_at, gate_failed";
constexpr std::size_t column_count(std::string_view columns) {
  std::size_t n = 1;
  for (char c : columns) n += c == ',' ? 1 : 0;
  return n;
}
constexpr std::size_t kReleaseColumnCount = column_count(kReleaseColumns);

constexpr const char* kMeasurementColumns =
    "digest, model_name, model_sha256, model_stable_sha256, device, hostname, runtime_version, measured_at, rung, model_id, ok, p50_ms, "
    "output_match, max_abs_diff, failure_class";
constexpr std::size_t kMeasurementColumnCount = 15;
constexpr std::size_t kRowsPerInsert = 200;  // one statement per this many rows: a round trip each on PostgreSQL

registry::Value optional_real(const std::optional<double>& v) { return v ? registry::Value{*v} : registry::Value{}; }

// What a read takes of each text column at most: what rung's writers store fits
// with room to spare, and a value another tool wrote larger (a 200 MB recipe) is
// left in the database, its release marked damaged, never copied into memory.
constexpr std::uint64_t kNameColumnRead = 4096, kTextColumnRead = 64 << 10;
std::uint64_t column_read_limit(std::string_view column) {
  if (column == "recipe" || column == "gate_failed") return kRegistryLimits.recipe_bytes;
  if (column == "artifact_path" || column == "cache_file" || column == "not_retained_reason" || column == "device" ||
      column == "providers" || column == "precision_detail")
    return kTextColumnRead;
  return kNameColumnRead;
}
constexpr std::string_view kNumericReleaseColumns[] = {"id", "artifact_size", "retained"};

// The columns of a release, a listing reading the stored key where a full read
// takes the recipe: each text column NULL when longer than it may be, and after
// them one more, the sum of 2^i over the columns i that were (SQLite and
// PostgreSQL alike: length() counts characters, never more than the bytes).
// The columns a release row is read with, in order: the recipe, or the release key in its place.
std::vector<std::string> release_column_names(bool with_recipe) {
  std::string columns = kReleaseColumns;
  if (!with_recipe) columns.replace(columns.find(" recipe,"), 8, " release_key,");
  std::vector<std::string> names;
  std::size_t start = 0;
  for (;;) {
    const auto comma = columns.find(',', start);
    std::string name = columns.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    name.erase(0, name.find_first_not_of(' '));
    names.push_back(std::move(name));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

std::string release_columns(bool with_recipe) {
  std::string select, oversize;
  std::size_t index = 0;
  for (const auto& name : release_column_names(with_recipe)) {
    const bool numeric = std::find(std::begin(kNumericReleaseColumns), std::end(kNumericReleaseColumns), name) != std::end(kNumericReleaseColumns);
    if (!select.empty()) select += ", ";
    if (numeric) {
      select += name;
    } else {
      const auto limit = column_read_limit(name);
      select += fmt::format("CASE WHEN length({0}) > {1} THEN NULL ELSE {0} END", name, limit);
      oversize += fmt::format("{}(CASE WHEN length({}) > {} THEN {} ELSE 0 END)", oversize.empty() ? "" : " + ", name, limit, std::int64_t{1} << index);
    }
    ++index;
  }
  return select + ", " + oversize;
}

// The names of the columns `mask` (release_columns' last) says were too long to read.
std::string oversize_columns(std::int64_t mask, bool with_recipe) {
  std::vector<std::string> names;
  std::size_t index = 0;
  for (const auto& name : release_column_names(with_recipe)) {
    if ((mask >> index) & 1) names.push_back(fmt::format("{} (over {} characters)", name, column_read_limit(name)));
    ++index;
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// A row rung cannot read whole is a release marked damaged, with why: the others
// of the registry are listed, shown and verified all the same.
Release release_from_row(const Row& r, bool with_recipe) {
  Release rel;
  rel.id = as_int(r[0]);
  rel.model = as_text(r[1]);
  rel.version = as_text(r[2]);
  rel.target = {as_text(r[3]), as_text(r[4])};
  rel.artifact.path = as_text(r[5]);
  rel.artifact.sha256 = as_text(r[6]);
  rel.artifact.stable_sha256 = as_text(r[7]);
  rel.artifact.size_bytes = static_cast<std::uintmax_t>(as_int(r[8]));
  rel.artifact.retained = as_int(r[9]) != 0;
  rel.artifact.not_retained_reason = as_text(r[10]);
  if (with_recipe) {
    rel.recipe_json = as_text(r[11]);
  } else {
    rel.recipe_json.clear();
    rel.listed_key = as_text(r[11]);
  }
  rel.environment.runtime_version = as_text(r[12]);
  rel.environment.device = as_text(r[13]);
  auto providers = parse_json_or_discarded(as_text(r[14]));
  if (providers.is_object()) {
    for (const auto& [k, v] : providers.items()) rel.environment.providers[k] = v.is_string() ? v.get<std::string>() : json_text(v);
  }
  rel.cache_sha256 = as_text(r[15]);
  rel.cache_file = as_text(r[16]);
  std::vector<std::string> damage;
  if (const auto mask = as_int(r[kReleaseColumnCount]); mask != 0) {
    damage.push_back(fmt::format("not read, too long: {}", oversize_columns(mask, with_recipe)));
  }
  auto precision = registry::precision_from_columns(as_text(r[17]), as_text(r[18]));
  if (precision) {
    rel.precision = *precision;
  } else {
    damage.push_back(precision.error().message);
  }
  rel.registered_at = as_text(r[19]);
  rel.gate_failed = registry::gate_failed_from_column(as_text(r[20]), is_null(r[20]));
  rel.damaged = fmt::format("{}", fmt::join(damage, "; "));
  return rel;
}

// A recipe whose gates failed (a `rung quantise` report forced or refused) is
// registered only marked so, and the mark only on such a recipe.
Status check_gate_mark(const Release& r) {
  const auto gates = recipe_gates(r.recipe_json);
  const bool failing = gates && !gates->passed();
  if (failing && !r.gate_failed) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("the recipe is a rung quantise report whose gate failed: {}; a release of it is registered only marked "
                             "so (rung registry add --gate-failed)",
                             printable(registry::gate_failed_text(*gates), 512))};
  }
  if (!failing && r.gate_failed) {
    return Error{ErrorCode::kInvalidArgument,
                 gates ? fmt::format("the release is marked gate failed, but its recipe's gates all passed (decision: {})", printable(gates->decision, 40))
                       : std::string("the release is marked gate failed, but its recipe is not a rung quantise report: it has no gates to fail")};
  }
  if (failing) {
    for (const auto& gate : gates->failed) {
      RUNG_RETURN_IF_ERROR(registry::check_stored_text("a failing gate of the recipe", gate, kRegistryLimits.text_bytes));
    }
    if (auto s = registry::check_stored_text("the recipe's decision", gates->decision, kRegistryLimits.name_bytes); !s) return s;
  }
  return {};
}

Status check_release(const Release& r) {
  auto missing = [](const char* what) { return Error{ErrorCode::kInvalidArgument, fmt::format("a release needs {}", what)}; };
  if (r.model.empty()) return missing("a model name");
  if (r.version.empty()) return missing("a version");
  if (r.target.device_class.empty() || r.target.rung.empty()) return missing("a target (device class and rung)");
  if (r.environment.runtime_version.empty() || r.environment.device.empty()) return missing("an environment (runtime version and device)");
  if (r.artifact.sha256.size() != 64) return missing("its artifact's SHA-256");
  if (!r.artifact.retained && r.artifact.not_retained_reason.empty()) return missing("the reason its artifact is not retained");
  if (r.precision.kind == PrecisionEvidence::Kind::kOpaque && r.precision.opaque_why.empty()) return missing("the reason its weights are opaque");
  // What is stored is printed by every listing: bounded, and free of control characters.
  const auto name = kRegistryLimits.name_bytes, text = kRegistryLimits.text_bytes;
  for (const auto& [field, value, limit] :
       {std::tuple{"the model name (NAME=PATH)", &r.model, name}, {"the version (--version)", &r.version, name},
        {"the device class (--device-class)", &r.target.device_class, name}, {"the rung (--rung)", &r.target.rung, name},
        {"the runtime version (--ort)", &r.environment.runtime_version, name}, {"the device (--device)", &r.environment.device, text},
        {"the artifact's SHA-256", &r.artifact.sha256, name}, {"the artifact's stable hash", &r.artifact.stable_sha256, name},
        {"the reason it is not retained (--not-retained)", &r.artifact.not_retained_reason, text},
        {"the reason its weights are opaque (--opaque)", &r.precision.opaque_why, text}, {"the cache's SHA-256", &r.cache_sha256, name},
        {"the cache's file name (--cache)", &r.cache_file, text}, {"the registration time", &r.registered_at, name}}) {
    RUNG_RETURN_IF_ERROR(registry::check_stored_text(field, *value, limit));
  }
  for (const auto& [provider, version] : r.environment.providers) {
    if (auto s = registry::check_stored_text("a provider's name", provider, name); !s) return s;
    if (auto s = registry::check_stored_text(fmt::format("provider {}'s version", provider), version, name); !s) return s;
  }
  RUNG_RETURN_IF_ERROR(registry::check_document_size(RegistryDocument::kRecipe, "the recipe", r.recipe_json.size()));
  auto recipe = parse_json(r.recipe_json);
  if (!recipe) return Error{ErrorCode::kInvalidArgument, fmt::format("the recipe is not JSON: {}", recipe.error().message)};
  if (!recipe->is_object()) return Error{ErrorCode::kInvalidArgument, "the recipe must be a JSON object"};
  return check_gate_mark(r);
}

std::vector<registry::Value> release_values(const Release& r, const std::string& key) {
  nlohmann::json providers(r.environment.providers);
  return {key,
          r.model,
          r.version,
          r.target.device_class,
          r.target.rung,
          r.artifact.path.string(),
          r.artifact.sha256,
          registry::text_or_null(r.artifact.stable_sha256),
          static_cast<std::int64_t>(r.artifact.size_bytes),
          std::int64_t{r.artifact.retained ? 1 : 0},
          registry::text_or_null(r.artifact.not_retained_reason),
          json_text(parse_json_or_discarded(r.recipe_json)),  // compact; check_release saw an object
          r.environment.runtime_version,
          r.environment.device,
          json_text(providers),
          registry::text_or_null(r.cache_sha256),
          registry::text_or_null(r.cache_file),
          std::string(registry::precision_kind_name(r.precision.kind)),
          registry::text_or_null(registry::precision_detail(r.precision)),
          r.registered_at,
          registry::text_or_null(registry::gate_failed_column(r.gate_failed))};
}

// "(?, ?, ?), (?, ?, ?)": the VALUES of a multi-row INSERT.
std::string placeholders(std::size_t columns, std::size_t rows) {
  std::string row = "(?";
  for (std::size_t c = 1; c < columns; ++c) row += ", ?";
  row += ")";
  std::string out = row;
  for (std::size_t r = 1; r < rows; ++r) out += ", " + row;
  return out;
}

// The fleet view's row a measurement counts in, and what it adds there.
using FleetKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;
struct FleetUpdate {
  std::int64_t measurements = 0;
  std::string measured_at;
  std::int64_t latest_id = 0;
  void add(const std::string& at, std::int64_t id) {
    measurements++;
    if (std::tie(at, id) > std::tie(measured_at, latest_id)) std::tie(measured_at, latest_id) = std::tie(at, id);
  }
};

// Counts new measurements into the fleet view, keeping the latest of each row.
Status update_fleet(registry::Database& db, const std::map<FleetKey, FleetUpdate>& updates) {
  constexpr std::size_t kColumns = 8;
  std::vector<std::pair<FleetKey, FleetUpdate>> list(updates.begin(), updates.end());
  for (std::size_t start = 0; start < list.size(); start += kRowsPerInsert) {
    const std::size_t end = std::min(list.size(), start + kRowsPerInsert);
    std::vector<registry::Value> params;
    for (std::size_t i = start; i < end; ++i) {
      const auto& [k, u] = list[i];
      for (registry::Value v : {registry::Value{std::get<0>(k)}, registry::Value{std::get<1>(k)}, registry::Value{std::get<2>(k)}, registry::Value{std::get<3>(k)}, registry::Value{std::get<4>(k)},
                      registry::Value{u.measurements}, registry::Value{u.measured_at}, registry::Value{u.latest_id}}) {
        params.push_back(std::move(v));
      }
    }
    // SET sees the row as it was: the latest is whichever of the two is later.
    auto r = db.query(fmt::format("INSERT INTO fleet (model_name, model_sha256, device, runtime_version, rung, measurements, measured_at, latest_id) "
                                  "VALUES {} ON CONFLICT (model_name, model_sha256, device, runtime_version, rung) DO UPDATE SET "
                                  "measurements = fleet.measurements + excluded.measurements, "
                                  "latest_id = CASE WHEN excluded.measured_at > fleet.measured_at OR (excluded.measured_at = fleet.measured_at "
                                  "AND excluded.latest_id > fleet.latest_id) THEN excluded.latest_id ELSE fleet.latest_id END, "
                                  "measured_at = CASE WHEN excluded.measured_at > fleet.measured_at THEN excluded.measured_at ELSE fleet.measured_at END",
                                  placeholders(kColumns, end - start)),
                      params);
    if (!r) return r.error();
  }
  return {};
}

// Inserts rows, skipping those already there, and counts the new ones into the
// fleet view; returns the digests of the measurements that gained a row.
Result<std::set<std::string>> insert_measurements(registry::Database& db, const std::vector<MeasurementRow>& rows) {
  // Every writer inserts in the same order, so two imports on PostgreSQL wait for each other rather than deadlock.
  std::map<std::pair<std::string, std::string>, const MeasurementRow*> by_key;
  for (const auto& m : rows) by_key.emplace(std::make_pair(m.digest, m.rung), &m);
  std::vector<const MeasurementRow*> sorted;
  for (const auto& [key, m] : by_key) sorted.push_back(m);
  std::set<std::string> inserted;
  std::map<FleetKey, FleetUpdate> fleet;
  for (std::size_t start = 0; start < sorted.size(); start += kRowsPerInsert) {
    const std::size_t end = std::min(sorted.size(), start + kRowsPerInsert);
    std::vector<registry::Value> params;
    params.reserve((end - start) * kMeasurementColumnCount);
    for (std::size_t i = start; i < end; ++i) {
      const auto& m = *sorted[i];
      for (registry::Value v : std::initializer_list<registry::Value>{m.digest, m.model_name, m.model_sha256, registry::text_or_null(m.model_stable_sha256), m.device,
                                                   m.hostname, m.runtime_version, m.measured_at, m.rung, m.model_id, std::int64_t{m.ok ? 1 : 0},
                                                   optional_real(m.p50_ms), m.output_match, optional_real(m.max_abs_diff),
                                                   registry::text_or_null(m.failure_class)}) {
        params.push_back(std::move(v));
      }
    }
    auto r = db.query(fmt::format("INSERT INTO measurements ({}) VALUES {} ON CONFLICT (digest, rung) DO NOTHING RETURNING id, digest, rung",
                                  kMeasurementColumns, placeholders(kMeasurementColumnCount, end - start)),
                      params);
    if (!r) return r.error();
    for (const auto& row : *r) {
      const auto it = by_key.find({as_text(row[1]), as_text(row[2])});
      if (it == by_key.end()) return Error{ErrorCode::kIo, "the database returned a measurement that was not inserted"};
      const MeasurementRow& m = *it->second;
      inserted.insert(m.digest);
      fleet[{m.model_name, m.model_sha256, m.device, m.runtime_version, m.rung}].add(m.measured_at, as_int(row[0]));
    }
  }
  RUNG_RETURN_IF_ERROR(update_fleet(db, fleet));
  return inserted;
}

// Attaches evidence to a release (once: the same document twice is one row).
Result<int> attach_evidence(registry::Database& db, std::int64_t release_id, const std::vector<ReleaseEvidence>& evidence) {
  int added = 0;
  for (const auto& e : evidence) {
    auto r = db.query("INSERT INTO evidence (release_id, kind, sha256, summary, document, added_at) VALUES (?, ?, ?, ?, ?, ?) "
                      "ON CONFLICT (release_id, sha256) DO NOTHING RETURNING id",
                      {release_id, e.kind, e.sha256, e.summary, e.document, registry::utc_now()});
    if (!r) return r.error();
    added += static_cast<int>(r->size());
  }
  return added;
}

Status load_evidence(registry::Database& db, std::vector<Release>& releases, bool documents) {
  if (releases.empty()) return {};
  std::vector<registry::Value> ids;
  std::string marks;
  for (const auto& r : releases) {
    ids.push_back(r.id);
    marks += marks.empty() ? "?" : ", ?";
  }
  // Each text column bounded as a release's are; a document longer than any rung stores is left where it is.
  const auto bounded = [](const char* column, std::uint64_t limit) {
    return fmt::format("CASE WHEN length({0}) > {1} THEN NULL ELSE {0} END, CASE WHEN length({0}) > {1} THEN 1 ELSE 0 END", column, limit);
  };
  const std::uint64_t document_limit = std::max(kRegistryLimits.bench_record_bytes, kRegistryLimits.parity_report_bytes);
  auto rows = db.query(fmt::format("SELECT release_id, {}, {}, {}{}{} FROM evidence WHERE release_id IN ({}) ORDER BY id", bounded("kind", kNameColumnRead),
                                   bounded("sha256", kNameColumnRead), bounded("summary", kTextColumnRead), documents ? ", " : "",
                                   documents ? bounded("document", document_limit) : "", marks),
                       ids);
  if (!rows) return rows.error();
  for (const auto& row : *rows) {
    for (auto& rel : releases) {
      if (rel.id != as_int(row[0])) continue;
      const bool too_long = as_int(row[2]) != 0 || as_int(row[4]) != 0 || as_int(row[6]) != 0 || (documents && as_int(row[8]) != 0);
      if (too_long) {
        rel.damaged += fmt::format("{}evidence {} not read: a column longer than rung writes", rel.damaged.empty() ? "" : "; ", rel.evidence.size() + 1);
      }
      rel.evidence.push_back({as_text(row[1]), as_text(row[3]), as_text(row[5]), documents ? as_text(row[7]) : std::string("null")});
    }
  }
  return {};
}

Result<std::vector<Release>> releases_where(registry::Database& db, const std::string& where, const std::vector<registry::Value>& params, bool documents) {
  std::vector<Release> out;
  Status s = registry::in_read_transaction(db, [&]() -> Status {
    auto rows = db.query(fmt::format("SELECT {} FROM releases {} ORDER BY model, version, id", release_columns(documents), where), params);
    if (!rows) return rows.error();
    for (const auto& row : *rows) out.push_back(release_from_row(row, documents));
    return load_evidence(db, out, documents);
  });
  if (!s) return s.error();
  return out;
}

std::string duplicate_key_refusal(const Release& r, const std::string& key, const std::string& existing_sha256) {
  return fmt::format("release key {} ({} {} for {}) is already registered with artifact sha256 {}; this artifact is sha256 {}. "
                     "The same recipe, environment and target made other bytes: the build is not reproducible, and the registry "
                     "keeps one release per key",
                     key.substr(0, 12), r.model, r.version, r.target_label(), existing_sha256, r.artifact.sha256);
}

VerifyLine verify_one(const Release& r) {
  VerifyLine line{r, VerifyState::kOk, {}};
  if (!r.damaged.empty()) {
    line.state = VerifyState::kDamaged;
    line.detail = r.damaged;
    return line;
  }
  if (!r.artifact.retained) {
    line.state = VerifyState::kNotRetained;
    line.detail = r.artifact.not_retained_reason;
    return line;
  }
  std::error_code ec;
  if (!fs::is_regular_file(r.artifact.path, ec)) {
    line.state = VerifyState::kMissing;
    line.detail = fmt::format("{}: does not exist", r.artifact.path.string());
    return line;
  }
  auto now = sha256_of_file(r.artifact.path);
  if (!now) {
    line.state = VerifyState::kMissing;
    line.detail = fmt::format("{} cannot be read: {}", r.artifact.path.string(), now.error().message);
    return line;
  }
  if (*now == r.artifact.sha256) return line;
  line.state = VerifyState::kChanged;
  line.detail = fmt::format("sha256 {} is now {}", r.artifact.sha256.substr(0, 12), now->substr(0, 12));
  if (!r.artifact.stable_sha256.empty()) {
    auto stable = stable_model_hash_of_file(r.artifact.path);
    line.detail += !stable                                 ? "; it no longer parses as an ONNX model"
                   : *stable == r.artifact.stable_sha256 ? "; the stable hash holds: only doc strings differ"
                                                           : "; the stable hash changed too: the graph differs";
  }
  return line;
}

}  // namespace

Registry::Registry(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;
Registry::~Registry() = default;

Result<Registry> Registry::open(const std::string& url, OpenMode mode) {
  auto db = registry::open_database(url, mode == OpenMode::kExistingOnly ? registry::OpenMode::kExistingOnly : registry::OpenMode::kCreateIfMissing);
  if (!db) return db.error();
  auto impl = std::make_unique<Impl>();
  impl->db = std::move(*db);
  return Registry(std::move(impl));
}

Result<std::string> Registry::default_url() { return registry::default_registry_url(); }
std::string Registry::describe() const { return impl_->db->describe(); }

Result<AddOutcome> Registry::add(Release release, const std::vector<EvidenceFile>& bench_records, const std::vector<EvidenceFile>& parity_reports) {
  RUNG_RETURN_IF_ERROR(check_release(release));
  if (release.gate_failed) release.gate_failed = recipe_gates(release.recipe_json);  // the mark holds what the recipe says
  if (release.registered_at.empty()) release.registered_at = registry::utc_now();
  AddOutcome out;
  out.kind = AddOutcome::Kind::kRefused;
  // Evidence is checked before anything is written: one refused document refuses the release.
  std::vector<ReleaseEvidence> evidence;
  std::vector<MeasurementRow> measurements;
  for (const auto* files : {&bench_records, &parity_reports}) {
    for (const auto& f : *files) {
      if (measurements.size() > kRegistryLimits.measurement_rows) break;  // refused below
      auto checked = files == &bench_records ? registry::check_bench_record(release, f) : registry::check_parity_report(release, f);
      if (!checked) return checked.error();
      if (!checked->accepted) {
        out.reason = checked->refusal;
        out.release = release;
        return out;
      }
      evidence.push_back(checked->evidence);
      for (auto& m : checked->measurements) measurements.push_back(std::move(m));
    }
  }
  if (measurements.size() > kRegistryLimits.measurement_rows) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("the bench records hold more than {} rows; the registry takes at most that many at once",
                                                          kRegistryLimits.measurement_rows)};
  }
  const std::string key = release.release_key();
  registry::Database& db = *impl_->db;
  std::int64_t id = 0;
  Status s = registry::in_write_transaction(db, [&]() -> Status {
    out.kind = AddOutcome::Kind::kAdded;
    out.evidence_added = out.measurements_added = 0;
    // The key, then every column but the id: as many values as kReleaseColumns has columns.
    auto inserted = db.query(fmt::format("INSERT INTO releases (release_key, {}) VALUES {} ON CONFLICT (release_key) DO NOTHING RETURNING id",
                                         std::string(kReleaseColumns).substr(4), placeholders(kReleaseColumnCount, 1)),
                             release_values(release, key));
    if (!inserted) return inserted.error();
    if (inserted->empty()) {
      // Taken, by this writer earlier or another one just now (a waiting insert sees its commit).
      auto existing = db.query("SELECT id, artifact_sha256 FROM releases WHERE release_key = ?", {key});
      if (!existing) return existing.error();
      if (existing->empty()) return Error{ErrorCode::kIo, "the release key was taken and then vanished"};
      if (as_text((*existing)[0][1]) != release.artifact.sha256) {
        out.kind = AddOutcome::Kind::kRefused;
        out.reason = duplicate_key_refusal(release, key, as_text((*existing)[0][1]));
        return {};
      }
      out.kind = AddOutcome::Kind::kAlreadyRegistered;
      id = as_int((*existing)[0][0]);
    } else {
      id = as_int((*inserted)[0][0]);
    }
    auto added = attach_evidence(db, id, evidence);
    if (!added) return added.error();
    out.evidence_added = *added;
    auto rows = insert_measurements(db, measurements);
    if (!rows) return rows.error();
    out.measurements_added = static_cast<int>(rows->size());
    return {};
  });
  if (!s) return s.error();
  if (out.kind == AddOutcome::Kind::kRefused) {
    out.release = release;
    return out;
  }
  auto stored = releases_where(db, "WHERE id = ?", {id}, true);
  if (!stored) return stored.error();
  if (stored->empty()) return Error{ErrorCode::kIo, fmt::format("release {} was written and cannot be read back", id)};
  out.release = std::move(stored->front());
  return out;
}

Result<std::vector<Release>> Registry::list() { return releases_where(*impl_->db, "", {}, false); }

Result<std::vector<Release>> Registry::find(const std::string& what) {
  // An id is a number short enough to be one; anything else is a model's name.
  if (!what.empty() && what.size() <= 18 && std::all_of(what.begin(), what.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return releases_where(*impl_->db, "WHERE id = ?", {std::int64_t{std::stoll(what)}}, true);
  }
  const auto at = what.rfind('@');
  if (at == std::string::npos) return releases_where(*impl_->db, "WHERE model = ?", {what}, true);
  return releases_where(*impl_->db, "WHERE model = ? AND version = ?", {what.substr(0, at), what.substr(at + 1)}, true);
}

Result<std::vector<VerifyLine>> Registry::verify() {
  auto releases = list();
  if (!releases) return releases.error();
  std::vector<VerifyLine> out;
  for (const auto& r : *releases) out.push_back(verify_one(r));
  return out;
}

Result<ImportOutcome> Registry::import_records(const std::vector<EvidenceFile>& records) {
  // Every file is read before anything is written: a bad one imports nothing.
  std::uint64_t bytes = 0;
  for (const auto& f : records) bytes += f.text.size();
  if (bytes > kRegistryLimits.import_bytes) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("the records are {} together; the registry imports at most {} at once: split them",
                                                          byte_size_text(bytes), byte_size_text(kRegistryLimits.import_bytes))};
  }
  std::vector<MeasurementRow> rows;
  std::set<std::string> digests, devices;
  for (const auto& f : records) {
    auto r = registry::measurement_rows(f.text, printable(f.path.string()));
    if (!r) return r.error();
    if (rows.size() + r->size() > kRegistryLimits.measurement_rows) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the records hold more than {} rows; the registry imports at most that many at once: "
                                                            "split them",
                                                            printable(f.path.string()), kRegistryLimits.measurement_rows)};
    }
    for (auto& row : *r) {
      digests.insert(row.digest);
      devices.insert(row.device);
      rows.push_back(std::move(row));
    }
  }
  std::set<std::string> inserted;
  registry::Database& db = *impl_->db;
  Status s = registry::in_write_transaction(db, [&]() -> Status {
    auto r = insert_measurements(db, rows);
    if (!r) return r.error();
    inserted = std::move(*r);
    return {};
  });
  if (!s) return s.error();
  ImportOutcome out;
  out.records = static_cast<int>(records.size());
  out.measurements_new = static_cast<int>(inserted.size());
  out.measurements_known = static_cast<int>(digests.size() - inserted.size());
  out.devices = static_cast<int>(devices.size());
  return out;
}

Result<std::vector<FleetModel>> Registry::fleet() {
  // The fleet table holds each row's count and latest measurement (kept as measurements arrive).
  auto rows = impl_->db->query(
      "SELECT f.model_name, f.model_sha256, f.device, f.runtime_version, f.rung, m.ok, m.p50_ms, m.output_match, m.failure_class, "
      "m.measured_at, f.measurements FROM fleet f JOIN measurements m ON m.id = f.latest_id "
      "ORDER BY f.model_name, f.model_sha256, f.device, f.runtime_version, f.rung");
  if (!rows) return rows.error();
  std::vector<FleetModel> out;
  for (const auto& r : *rows) {
    if (out.empty() || out.back().name != as_text(r[0]) || out.back().sha256 != as_text(r[1])) out.push_back({as_text(r[0]), as_text(r[1]), {}, {}});
    FleetModel& m = out.back();
    if (m.devices.empty() || m.devices.back().device != as_text(r[2]) || m.devices.back().runtime_version != as_text(r[3])) {
      m.devices.push_back({as_text(r[2]), as_text(r[3]), {}});
    }
    FleetCell cell;
    cell.ok = as_int(r[5]) != 0;
    if (!is_null(r[6])) cell.p50_ms = as_real(r[6]);
    cell.output_match = as_text(r[7]);
    cell.failure_class = as_text(r[8]);
    cell.measured_at = as_text(r[9]);
    cell.measurements = static_cast<int>(as_int(r[10]));
    const std::string rung = as_text(r[4]);
    m.devices.back().rungs[rung] = cell;
    if (std::find(m.rungs.begin(), m.rungs.end(), rung) == m.rungs.end()) m.rungs.push_back(rung);
  }
  for (auto& m : out) {
    // The CPU first: it is every device's floor and reference.
    std::sort(m.rungs.begin(), m.rungs.end(), [](const std::string& a, const std::string& b) {
      return a == "cpu" ? b != "cpu" : b == "cpu" ? false : a < b;
    });
  }
  return out;
}

}  // namespace rung
