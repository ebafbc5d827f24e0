// The release registry: what shipped, how it was made, where it was measured
// and how it behaved. Neither a recipe nor an artifact's hash says what a
// model will do, so a release holds both, plus the environment, the engine or
// timing cache, precision evidence read off the artifact and behaviour measured
// on the target (bench records, parity reports). The release key is all of it
// but the artifact's hash, and it is unique: the same key with other bytes is
// refused, naming both hashes. SQLite by default, PostgreSQL for a fleet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rung/hardware.h"
#include "rung/result.h"

namespace rung {

// What the registry accepts is bounded, so that reading a document, adding a
// release and listing the registry are too. Text fields are also refused when
// they hold a control character or are not UTF-8 (naming the field).
struct RegistryLimits {
  std::uint64_t recipe_bytes;         // --recipe: a quantise report is tens of KiB
  std::uint64_t bench_record_bytes;   // --bench, import: a record grows by about 1 KiB a run, and its rows' kept run times (up to 2 000 each)
  std::uint64_t parity_report_bytes;  // --parity
  std::uint64_t import_bytes;         // all the records of one import together
  std::size_t measurement_rows;       // rows of one add or import (a rung of a measurement each)
  std::size_t name_bytes;             // model, version, rung, device class, runtime version, host, ...
  std::size_t text_bytes;             // device identity, reasons (--not-retained, --opaque), recipe settings
};
inline constexpr RegistryLimits kRegistryLimits{4ull << 20, 16ull << 20, 8ull << 20, 256ull << 20, 100'000, 128, 1024};

struct ReleaseTarget {
  std::string device_class;  // "x86_64 CPU", "x86_64 NVIDIA GPU", "aarch64 Qualcomm SoC"
  std::string rung;          // "cpu", "tensorrt", a plugin's rung name ("rung_sim_ep")
};

// The environment a release targets; evidence measured elsewhere is refused.
struct ReleaseEnvironment {
  std::string runtime_version;                   // ONNX Runtime "1.30.0"
  std::string device;                            // the hardware identity (Hardware::identity())
  std::map<std::string, std::string> providers;  // provider -> version ("sha256:..." of a plugin library)
};

struct ReleaseArtifact {
  std::filesystem::path path;  // absolute
  std::string sha256;          // of the bytes
  std::string stable_sha256;   // of the ONNX graph without doc strings; "" when not ONNX
  std::uintmax_t size_bytes = 0;
  bool retained = true;
  std::string not_retained_reason;  // why it is deliberately not kept
};

// What the artifact's weights are stored as: counts by element type read from
// its initializers; or opaque, with why (an EPContext engine, a compiled plan);
// or not inspected. Opaque and not inspected are different claims.
struct PrecisionEvidence {
  enum class Kind { kNotInspected, kInitializers, kOpaque };
  struct Count {
    std::uint64_t tensors = 0, elements = 0;
  };
  Kind kind = Kind::kNotInspected;
  std::map<std::string, Count> by_type;  // "float32", "int8", ...
  std::string opaque_why;
};

// A bench record or parity report measured on the release's target.
struct ReleaseEvidence {
  std::string kind;      // "bench" or "parity"
  std::string sha256;    // of the document as stored
  std::string summary;   // one line
  std::string document;  // JSON: a bench record keeps only the target's measurements
};

// What a recipe says of its own gates. A `rung quantise` report (its "schema" is
// "rung-quantise-report") carries its decision and each gate's verdict; a
// recipe of any other kind has no gates and says nothing.
struct RecipeGates {
  std::string decision;             // the report's: "written", "refused", "forced" ("" when it holds none)
  std::vector<std::string> failed;  // its "failed", then every gate whose "passed" is not true, each once
  // Decision "written" and no gate failed: the only report the registry takes unmarked.
  bool passed() const { return decision == "written" && failed.empty(); }
};
// nullopt when the recipe is not a quantise report (or not JSON).
std::optional<RecipeGates> recipe_gates(const std::string& recipe_json);

struct Release {
  std::int64_t id = 0;
  std::string model;    // name
  std::string version;
  ReleaseTarget target;
  ReleaseArtifact artifact;
  // How it was made, as a JSON object: {"command": ..., "settings": {...}}, or
  // a whole report (`rung quantise`'s). When it has a member "recipe", only that
  // member enters the release key: a report's results (its output hash, its
  // measured figures, its date) describe one build, not how builds are made.
  std::string recipe_json = "{}";
  // Set when the release is registered although its recipe's gates failed (a
  // `rung quantise --force` report; `rung registry add --gate-failed`): that
  // recipe's decision and failing gates, stored with the release. Registry::add
  // refuses a recipe whose gates failed without this mark, and the mark on any
  // other recipe; it takes the decision and gates from the recipe itself. Not
  // part of the release key (the recipe's "recipe" member already is).
  std::optional<RecipeGates> gate_failed;
  ReleaseEnvironment environment;
  std::string cache_sha256;  // the engine or timing cache it was built with; "" when none
  std::string cache_file;
  PrecisionEvidence precision;
  std::vector<ReleaseEvidence> evidence;
  std::string registered_at;  // UTC, ISO 8601
  // The key as stored. Registry::list() does not load recipes (a listing stays
  // small however large they are): its releases have an empty recipe_json and this.
  std::string listed_key;
  // Why the row could not be read whole (a column another tool wrote longer than
  // rung reads, a precision it does not know); "" when it was. A damaged release
  // is still listed, shown and verified (as "damaged"), with the others.
  std::string damaged;

  // SHA-256 of model, version, target, recipe, environment and cache (listed_key when set).
  std::string release_key() const;
  std::string target_label() const;  // "x86_64 CPU / ORT 1.30.0 / cpu"
  std::string to_json() const;
};

// The artifact's hashes, size and precision evidence. A file that is not an
// ONNX model needs `opaque_why` (its weights cannot be read); an ONNX model of
// EPContext nodes is opaque by itself.
Result<std::pair<ReleaseArtifact, PrecisionEvidence>> inspect_artifact(const std::filesystem::path& file,
                                                                       const std::string& opaque_why = "");
// The SHA-256 of a file whose bytes are never interpreted (an engine or timing
// cache), read a piece at a time: memory stays flat however large the file.
// Errors name the file: not there, not a regular file, not readable.
Result<std::string> opaque_file_sha256(const std::filesystem::path& file);

// "x86_64 CPU", "x86_64 NVIDIA GPU": the machine and what accelerates it.
std::string device_class_of(const Hardware& hardware);

// Provider versions for a rung: a ladder rung's provider is the runtime's own
// version; a plugin library's is its SHA-256.
Result<std::map<std::string, std::string>> provider_versions(const std::string& rung, const std::string& runtime_version,
                                                             const std::filesystem::path& plugin_library = {});

// Evidence files given with a release, by path and text.
struct EvidenceFile {
  std::filesystem::path path;
  std::string text;
};

// The documents the registry reads, each with its limit (kRegistryLimits).
enum class RegistryDocument { kRecipe, kBenchRecord, kParityReport };
// A regular file of at most its kind's limit (a FIFO or device is refused
// without waiting on it): "recipe r.json: is 200.0 MiB; rung reads at most 4.0 MiB ...".
Result<EvidenceFile> read_registry_document(const std::filesystem::path& path, RegistryDocument kind);

struct AddOutcome {
  enum class Kind { kAdded, kAlreadyRegistered, kRefused };
  Kind kind = Kind::kAdded;
  std::string reason;  // kRefused: why, naming both hashes or the mismatch
  Release release;     // as stored
  int evidence_added = 0;
  int measurements_added = 0;
  std::string to_json() const;  // {"outcome", "reason", "evidence_added", "release"}
};

// What `registry show --json` prints (schemas/registry-show.schema.json): the
// registry's description and the releases found, each as Release::to_json().
std::string show_json(const std::string& registry, const std::vector<Release>& releases);

enum class VerifyState { kOk, kChanged, kMissing, kNotRetained, kDamaged };
const char* verify_state_name(VerifyState s);  // "ok", "changed", "missing", "not retained", "damaged"

struct VerifyLine {
  Release release;
  VerifyState state = VerifyState::kOk;
  std::string detail;  // which hash changed, the reason it is not retained
};

struct ImportOutcome {
  int records = 0;
  int measurements_new = 0;
  int measurements_known = 0;  // imported before: not duplicated
  int devices = 0;
};

// The fleet view: per model, each device's rungs side by side.
struct FleetCell {
  bool ok = false;
  std::optional<double> p50_ms;
  std::string output_match;   // "reference", "match", "mismatch", "not compared"
  std::string failure_class;
  std::string measured_at;
  int measurements = 0;       // how many were imported; the latest is shown
};
struct FleetDevice {
  std::string device;
  std::string runtime_version;
  std::map<std::string, FleetCell> rungs;
};
struct FleetModel {
  std::string name;
  std::string sha256;
  std::vector<std::string> rungs;  // columns, the CPU first
  std::vector<FleetDevice> devices;
};

class Registry {
 public:
  // Whether opening may create the registry: a command that only reads
  // (list, show, verify, a lint) opens an existing one, and a registry that is
  // not there is kNotFound, naming it, rather than a new empty one.
  enum class OpenMode { kCreateIfMissing, kExistingOnly };
  // See registry URLs in the README: a path, `sqlite:PATH`, `postgresql://...`.
  static Result<Registry> open(const std::string& url, OpenMode mode = OpenMode::kCreateIfMissing);
  // RUNG_REGISTRY, else a file in the user's data directory; an error naming what to set when there is none.
  static Result<std::string> default_url();
  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;
  ~Registry();
  std::string describe() const;

  // Registers a release with its evidence, in one transaction. A refusal
  // (the key taken by other bytes, evidence from another runtime build, device
  // or model) is an outcome, not an error; errors are bad input or the database.
  Result<AddOutcome> add(Release release, const std::vector<EvidenceFile>& bench_records,
                         const std::vector<EvidenceFile>& parity_reports);
  Result<std::vector<Release>> list();
  // By id, or MODEL or MODEL@VERSION (several when several targets).
  Result<std::vector<Release>> find(const std::string& what);
  Result<std::vector<VerifyLine>> verify();
  // Appends every measurement of every record (a file of any device); one transaction.
  Result<ImportOutcome> import_records(const std::vector<EvidenceFile>& records);
  Result<std::vector<FleetModel>> fleet();

 private:
  struct Impl;
  explicit Registry(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rung
