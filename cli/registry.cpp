// `rung registry add|list|show|verify|import`: releases with their recipe,
// environment, artifact and the behaviour measured on their target.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "rung/json_text.h"
#include "rung/ladder.h"
#include "rung/rung_names.h"
#include "output_check.h"
#include "rung/path_text.h"
#include "runtime_args.h"
#include "rung/hardware.h"
#include "rung/print.h"
#include "rung/printable.h"
#include "rung/registry.h"
#include "rung/runtime.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct RegistryCliOptions {
  std::string url;
  JsonOutput json;
  // add
  std::string model;  // NAME=PATH
  std::string version;
  std::string rung = "cpu";
  std::string plugin;
  std::string device_class;
  std::string ort_version;
  std::string device;
  RuntimeArgs runtime;
  std::string hardware_root = "/";
  std::string recipe_file;
  bool gate_failed = false;  // --gate-failed: register a quantise report whose gates failed, marked so
  std::string made_by;
  std::vector<std::string> settings;  // KEY=VALUE
  std::string cache_file;
  std::vector<std::string> bench;
  std::vector<std::string> parity;
  std::string not_retained;
  std::string opaque;
  // list, show, import
  bool by_device = false;
  std::string what;
  std::vector<std::string> records;
};

std::string short_hash(const std::string& h) { return h.empty() ? "-" : h.substr(0, 12); }

// Errors from the registry: bad input or an unusable database is a usage error (2).
// Their words may quote a file's or a user's text: escaped for the terminal.
[[noreturn]] void fail(const Error& e) { throw CliError(kExitUsage, printable(e.message)); }

template <class T>
T value_or_fail(Result<T> r) {
  if (!r) fail(r.error());
  return std::move(*r);
}

// A command that only reads opens an existing registry: a typo in --registry is an error, not a new empty one.
Registry open_registry(const RegistryCliOptions& o, Registry::OpenMode mode) {
  return value_or_fail(Registry::open(o.url.empty() ? value_or_fail(Registry::default_url()) : o.url, mode));
}

// Text from a file, a user or the database, for a terminal (rung/printable.h); a table's cells are also bounded.
std::string shown(const std::string& text) { return printable(text); }
std::string cell(const std::string& text) { return printable(text, 48); }

// Each file through the registry's reader, with its kind's limit (all of an import together, too).
std::vector<EvidenceFile> read_documents(const std::vector<std::string>& paths, RegistryDocument kind) {
  std::vector<EvidenceFile> out;
  std::uint64_t bytes = 0;
  for (const auto& p : paths) {
    out.push_back(value_or_fail(read_registry_document(p, kind)));
    bytes += out.back().text.size();
    if (bytes > kRegistryLimits.import_bytes) {
      throw CliError(kExitUsage, fmt::format("{}: the records come to more than {} MiB together, the most one command takes: split them", shown(p),
                                             kRegistryLimits.import_bytes >> 20));
    }
  }
  return out;
}

// The recipe: a JSON object from a file (a quantise report), or the command that made it and its settings.
std::string recipe_of(const RegistryCliOptions& o) {
  if (!o.recipe_file.empty()) {
    // Parsed (bounded, and compacted) by the registry, which refuses anything but an object.
    std::string text = value_or_fail(read_registry_document(o.recipe_file, RegistryDocument::kRecipe)).text;
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') throw CliError(kExitUsage, fmt::format("--recipe {}: not a JSON object", shown(o.recipe_file)));
    return text;
  }
  if (o.made_by.empty()) {
    throw CliError(kExitUsage, "a release needs its recipe: --recipe FILE (a rung quantise report, any JSON object) or --made-by COMMAND");
  }
  json recipe = {{"command", o.made_by}, {"settings", json::object()}};
  for (const auto& s : o.settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw CliError(kExitUsage, fmt::format("--setting {}: expected KEY=VALUE", shown(s)));
    recipe["settings"][s.substr(0, eq)] = s.substr(eq + 1);
  }
  return json_text(recipe);
}

// "classification · y (decision: forced)": a report's failing gates, escaped for the terminal.
std::string gates_text(const RecipeGates& g) {
  return fmt::format("{} (decision: {})", g.failed.empty() ? std::string("no gate named") : printable(fmt::format("{}", fmt::join(g.failed, ", ")), 512),
                     g.decision.empty() ? "none" : shown(g.decision));
}

// A rung quantise report whose gates failed (forced, refused, or any gate not
// passed) is registered only with --gate-failed, and the release then carries
// the mark; --gate-failed on any other recipe is a mistake. Other recipes are
// taken as they are.
void mark_gates(const RegistryCliOptions& o, Release& r) {
  const auto gates = recipe_gates(r.recipe_json);
  const bool failing = gates && !gates->passed();
  if (failing && !o.gate_failed) {
    throw CliError(kExitUsage, fmt::format("refused: --recipe {} is a rung quantise report whose gate failed: {}. A form that failed its gate "
                                           "is registered only marked so: add --gate-failed",
                                           shown(o.recipe_file), gates_text(*gates)));
  }
  if (!failing && o.gate_failed) {
    if (gates) {
      throw CliError(kExitUsage, fmt::format("--gate-failed: --recipe {} is a rung quantise report whose gates all passed (decision: {}); "
                                             "drop --gate-failed",
                                             shown(o.recipe_file), shown(gates->decision)));
    }
    throw CliError(kExitUsage, fmt::format("--gate-failed: {} is not a rung quantise report, so it has no gates to fail; --gate-failed marks a "
                                           "release whose report's gates failed",
                                           o.recipe_file.empty() ? std::string("the recipe (--made-by)") : "--recipe " + shown(o.recipe_file)));
  }
  if (failing) r.gate_failed = gates;
}

// The runtime version a release targets: --ort, else the build rung would choose here.
std::string target_runtime_version(const RegistryCliOptions& o, const Hardware& hw) {
  if (!o.ort_version.empty()) return o.ort_version;
  RuntimeSearchOptions search;
  o.runtime.apply_to(search);
  auto discovery = discover_runtimes(search, hw);
  if (!discovery || discovery->chosen_build() == nullptr) {
    const int code = discovery ? kExitNoRuntime : exit_code_for(discovery.error().code);  // a missing --ort-dir is a usage error
    throw CliError(code, fmt::format("no ONNX Runtime build to take the target's version from ({}); give --ort VERSION",
                                               discovery ? discovery->choice_reason : discovery.error().message));
  }
  return discovery->chosen_build()->version;
}

Release release_of(const RegistryCliOptions& o) {
  Release r;
  const auto eq = o.model.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == o.model.size()) {
    throw CliError(kExitUsage, fmt::format("{}: the artifact is given as NAME=PATH (the model's name, then its file)", shown(o.model)));
  }
  r.model = o.model.substr(0, eq);
  r.version = o.version;
  // The recipe first: a report whose gates failed is refused before anything is inspected or discovered.
  r.recipe_json = recipe_of(o);
  mark_gates(o, r);
  auto [artifact, precision] = value_or_fail(inspect_artifact(o.model.substr(eq + 1), o.opaque));
  r.artifact = artifact;
  r.precision = precision;
  if (!o.not_retained.empty()) {
    r.artifact.retained = false;
    r.artifact.not_retained_reason = o.not_retained;
  }
  const Hardware hw = detect_hardware(o.hardware_root);
  // The rung's id however it was written ("CUDA", "cuda"); a plugin's as its library names it.
  const std::string plugin_rung = o.plugin.empty() ? "" : rung_id(o.plugin);
  r.target.rung = !plugin_rung.empty() && same_rung_name(plugin_rung, o.rung) ? plugin_rung : rung_id(o.rung);
  r.target.device_class = o.device_class.empty() ? device_class_of(hw) : o.device_class;
  r.environment.device = o.device.empty() ? hw.identity() : o.device;
  r.environment.runtime_version = target_runtime_version(o, hw);
  r.environment.providers = value_or_fail(provider_versions(r.target.rung, r.environment.runtime_version, o.plugin));
  if (!o.cache_file.empty()) {
    // A cache is opaque bytes: only its hash enters the release key, read in pieces, never parsed as a model.
    r.cache_sha256 = value_or_fail(opaque_file_sha256(o.cache_file));
    r.cache_file = fs::path(o.cache_file).filename().string();
  }
  return r;
}

std::string precision_text(const PrecisionEvidence& p) {
  if (p.kind == PrecisionEvidence::Kind::kNotInspected) return "not inspected";
  if (p.kind == PrecisionEvidence::Kind::kOpaque) return "opaque: " + shown(p.opaque_why);
  std::string out;
  for (const auto& [type, c] : p.by_type) {
    out += fmt::format("{}{} {} ({} element{})", out.empty() ? "" : ", ", c.tensors, shown(type), c.elements, c.elements == 1 ? "" : "s");
  }
  return out.empty() ? "no initializers" : out;
}

// Every release was listed or shown, a damaged one marked; the answer is still "not all is well" (exit 1).
void fail_on_damage(const Registry& registry, const std::vector<Release>& releases) {
  std::vector<std::string> ids;
  for (const auto& r : releases) {
    if (!r.damaged.empty()) ids.push_back(std::to_string(r.id));
  }
  if (ids.empty()) return;
  throw CliError(kExitFailed, fmt::format("{}: release{} {} cannot be read whole (shown as damaged, with why); the others are as listed",
                                          shown(registry.describe()), ids.size() == 1 ? "" : "s", fmt::join(ids, ", ")));
}

void print_release(const Release& r) {
  rung::print("release {}: {} {} for {}\n", r.id, shown(r.model), shown(r.version), shown(r.target_label()));
  if (!r.damaged.empty()) rung::print("  DAMAGED      {}\n", shown(r.damaged));
  rung::print("  key          {}\n", r.release_key());
  rung::print("  artifact     {}\n", shown(r.artifact.path.string()));
  rung::print("               sha256 {}\n", shown(r.artifact.sha256));
  rung::print("               stable {}\n", r.artifact.stable_sha256.empty() ? "(not an ONNX graph)" : shown(r.artifact.stable_sha256));
  rung::print("               {} bytes, {}\n", r.artifact.size_bytes, r.artifact.retained ? "retained" : "not retained: " + shown(r.artifact.not_retained_reason));
  rung::print("  precision    {}\n", precision_text(r.precision));
  rung::print("  recipe       {}\n", printable(r.recipe_json, 157));
  if (r.gate_failed) rung::print("  gate         FAILED: {}; registered with --gate-failed\n", gates_text(*r.gate_failed));
  rung::print("  environment  ORT {} · {}\n", shown(r.environment.runtime_version), shown(r.environment.device));
  for (const auto& [provider, version] : r.environment.providers) rung::print("               {} {}\n", shown(provider), shown(version));
  rung::print("  cache        {}\n", r.cache_sha256.empty() ? "none" : fmt::format("{} (sha256 {})", shown(r.cache_file), shown(r.cache_sha256)));
  if (r.evidence.empty()) rung::print("  evidence     none\n");
  for (std::size_t i = 0; i < r.evidence.size(); ++i) rung::print("  {}{}\n", i == 0 ? "evidence     " : "             ", shown(r.evidence[i].summary));
  rung::print("  registered   {}\n", shown(r.registered_at));
}

std::string evidence_counts(const Release& r) {
  const auto bench = std::count_if(r.evidence.begin(), r.evidence.end(), [](const ReleaseEvidence& e) { return e.kind == "bench"; });
  const auto parity = static_cast<long>(r.evidence.size()) - bench;
  return r.evidence.empty() ? "none" : fmt::format("{} bench, {} parity", bench, parity);
}

// Columns as wide as their widest cell.
void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) line += fmt::format(" {:<{}}", row[c], c + 1 == row.size() ? 0 : width[c]);
    rung::print("{}\n", line);
  }
}

// A SQLite registry is a file the command writes: never one of the documents or the artifact it reads.
// The SQLite file of --registry, or "" for a server's database.
std::string registry_file(const RegistryCliOptions& o) {
  std::string url = o.url.empty() ? value_or_fail(Registry::default_url()) : o.url;
  if (url.find("://") != std::string::npos) return {};  // a server's database
  if (url.starts_with("sqlite:")) url = url.substr(7);
  return url;
}

// The JSON written (--out-json) is none of what the command reads, nor the registry it writes.
void check_registry_is_no_input(const RegistryCliOptions& o, std::vector<NamedPath> inputs) {
  // The registry is rung's own state, and this command's to write: checked against what the
  // command reads, and then one of the inputs the JSON output may not replace or share.
  if (const std::string file = registry_file(o); !file.empty()) {
    if (auto s = check_output_paths({{"--registry", path_from_utf8(file), /*parents_made=*/true}}, inputs); !s) throw CliError(kExitUsage, s.error().message);
    inputs.push_back({"--registry", path_from_utf8(file)});
  }
  check_outputs_before_work({o.json.output()}, inputs);
}

// A command that only reads the registry: --out-json is not the registry's file.
void check_json_is_no_input(const RegistryCliOptions& o) { check_outputs_before_work({o.json.output()}, {{"--registry", registry_file(o)}}); }

bool wants_json(const RegistryCliOptions& o) { return o.json.on_stdout() || o.json.to_file(); }

void emit(const RegistryCliOptions& o, const json& document) { o.json.emit_text(json_text(document, 2)); }

void run_add(const RegistryCliOptions& o) {
  {
    std::vector<NamedPath> inputs = {{"the artifact", file_of_assignment(o.model)}, {"--recipe", o.recipe_file}, {"--cache", o.cache_file},
                                     {"--plugin", o.plugin}};
    for (const auto& b : o.bench) inputs.push_back({"--bench", b});
    for (const auto& p : o.parity) inputs.push_back({"--parity", p});
    check_registry_is_no_input(o, inputs);
  }
  Release release = release_of(o);
  // Every document is read (bounded) before the registry is opened: a bad one leaves nothing behind.
  auto bench = read_documents(o.bench, RegistryDocument::kBenchRecord);
  auto parity = read_documents(o.parity, RegistryDocument::kParityReport);
  auto registry = open_registry(o, Registry::OpenMode::kCreateIfMissing);
  auto outcome = value_or_fail(registry.add(release, bench, parity));
  const char* kind = outcome.kind == AddOutcome::Kind::kAdded ? "added" : outcome.kind == AddOutcome::Kind::kAlreadyRegistered ? "already registered" : "refused";
  if (wants_json(o)) o.json.emit_text(outcome.to_json());
  if (!o.json.on_stdout() && outcome.kind != AddOutcome::Kind::kRefused) {
    rung::print("{} · {}{}\n", kind, shown(registry.describe()),
               outcome.kind == AddOutcome::Kind::kAlreadyRegistered ? fmt::format(" · {} new evidence", outcome.evidence_added) : "");
    print_release(outcome.release);
  }
  if (outcome.kind == AddOutcome::Kind::kRefused) throw CliError(kExitFailed, "refused: " + shown(outcome.reason));
}

void run_list(const RegistryCliOptions& o) {
  check_json_is_no_input(o);
  auto registry = open_registry(o, Registry::OpenMode::kExistingOnly);
  auto releases = value_or_fail(registry.list());
  if (wants_json(o)) {
    json list = json::array();
    for (const auto& r : releases) {
      list.push_back({{"id", r.id}, {"model", r.model}, {"version", r.version}, {"target", r.target_label()}, {"release_key", r.release_key()},
                      {"damaged", r.damaged.empty() ? json(nullptr) : json(r.damaged)},
                      {"artifact_sha256", r.artifact.sha256}, {"retention", r.artifact.retained ? "retained" : "not retained: " + r.artifact.not_retained_reason},
                      {"gate_failed", r.gate_failed ? json{{"decision", r.gate_failed->decision}, {"failed", r.gate_failed->failed}} : json(nullptr)},
                      {"evidence", evidence_counts(r)}});
    }
    emit(o, json{{"schema", "rung-registry-list"}, {"schema_version", 1}, {"registry", registry.describe()}, {"releases", list}});
  }
  if (o.json.on_stdout()) return fail_on_damage(registry, releases);
  rung::print("{} · {} release{}\n", shown(registry.describe()), releases.size(), releases.size() == 1 ? "" : "s");
  if (releases.empty()) return;
  std::vector<std::vector<std::string>> rows = {{"id", "model", "version", "target", "artifact", "retention", "evidence"}};
  for (const auto& r : releases) {
    rows.push_back({std::to_string(r.id), cell(r.model), cell(r.version), cell(r.target_label()), cell(short_hash(r.artifact.sha256)),
                    !r.damaged.empty() ? "DAMAGED" : r.artifact.retained ? "retained" : "not retained", evidence_counts(r)});
  }
  print_table(rows);
  fail_on_damage(registry, releases);
}

std::string cell_text(const FleetDevice& d, const std::string& rung) {
  auto it = d.rungs.find(rung);
  if (it == d.rungs.end()) return "-";
  const FleetCell& c = it->second;
  if (!c.ok) return fmt::format("failed ({})", cell(c.failure_class));
  const std::string p50 = c.p50_ms ? fmt::format("{:.3g} ms", *c.p50_ms) : "-";
  return fmt::format("{} {}", p50, c.output_match == "mismatch" ? "MISMATCH" : cell(c.output_match));
}

json fleet_json(const std::vector<FleetModel>& models) {
  json out = json::array();
  for (const auto& m : models) {
    json devices = json::array();
    for (const auto& d : m.devices) {
      json rungs = json::object();
      for (const auto& [rung, c] : d.rungs) {
        rungs[rung] = {{"ok", c.ok}, {"p50_ms", c.p50_ms ? json(*c.p50_ms) : json(nullptr)}, {"output_match", c.output_match},
                       {"failure_class", c.failure_class.empty() ? json(nullptr) : json(c.failure_class)}, {"measured_at", c.measured_at},
                       {"measurements", c.measurements}};
      }
      devices.push_back({{"device", d.device}, {"runtime_version", d.runtime_version}, {"rungs", rungs}});
    }
    out.push_back({{"model", m.name}, {"sha256", m.sha256}, {"rungs", m.rungs}, {"devices", devices}});
  }
  return out;
}

void run_fleet(const RegistryCliOptions& o) {
  check_json_is_no_input(o);
  auto registry = open_registry(o, Registry::OpenMode::kExistingOnly);
  auto models = value_or_fail(registry.fleet());
  if (wants_json(o)) emit(o, json{{"schema", "rung-registry-fleet"}, {"schema_version", 1}, {"registry", registry.describe()}, {"models", fleet_json(models)}});
  if (o.json.on_stdout()) return;
  rung::print("{} · {} model{} measured\n", shown(registry.describe()), models.size(), models.size() == 1 ? "" : "s");
  for (const auto& m : models) {
    rung::print("\n{} (sha256 {})\n", shown(m.name), cell(short_hash(m.sha256)));
    std::vector<std::string> header = {"device", "ORT"};
    for (const auto& r : m.rungs) header.push_back(cell(r));
    std::vector<std::vector<std::string>> rows = {header};
    for (const auto& d : m.devices) {
      std::vector<std::string> row = {printable(d.device, 96), cell(d.runtime_version)};
      for (const auto& r : m.rungs) row.push_back(cell_text(d, r));
      rows.push_back(std::move(row));
    }
    print_table(rows);
  }
}

void run_show(const RegistryCliOptions& o) {
  check_json_is_no_input(o);
  auto registry = open_registry(o, Registry::OpenMode::kExistingOnly);
  auto found = value_or_fail(registry.find(o.what));
  if (found.empty()) {
    throw CliError(kExitUsage, fmt::format("no release '{}' in {} (give an id, MODEL or MODEL@VERSION)", printable(o.what, 200), shown(registry.describe())));
  }
  // One document however many releases the name finds: each release whole, as the registry holds it.
  if (wants_json(o)) {
    o.json.emit_text(show_json(registry.describe(), found));
  }
  if (!o.json.on_stdout()) {
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (i > 0) rung::print("\n");
      print_release(found[i]);
    }
  }
  fail_on_damage(registry, found);
}

void run_verify(const RegistryCliOptions& o) {
  check_json_is_no_input(o);
  auto registry = open_registry(o, Registry::OpenMode::kExistingOnly);
  auto lines = value_or_fail(registry.verify());
  std::map<VerifyState, int> counts;
  for (const auto& l : lines) counts[l.state]++;
  const bool bad = counts[VerifyState::kChanged] > 0 || counts[VerifyState::kMissing] > 0 || counts[VerifyState::kDamaged] > 0;
  if (wants_json(o)) {
    json list = json::array();
    for (const auto& l : lines) {
      list.push_back({{"id", l.release.id}, {"model", l.release.model}, {"version", l.release.version}, {"target", l.release.target_label()},
                      {"path", l.release.artifact.path.string()}, {"state", verify_state_name(l.state)}, {"detail", l.detail}});
    }
    emit(o, json{{"schema", "rung-registry-verify"}, {"schema_version", 1}, {"registry", registry.describe()}, {"releases", list}, {"ok", !bad}});
  }
  if (!o.json.on_stdout()) {
    rung::print("{} · verifying {} release{}\n", shown(registry.describe()), lines.size(), lines.size() == 1 ? "" : "s");
    std::vector<std::vector<std::string>> rows = {{"id", "model", "version", "target", "state"}};
    for (const auto& l : lines) {
      std::string state = verify_state_name(l.state);
      if (!l.detail.empty()) state += ": " + shown(l.detail);
      rows.push_back({std::to_string(l.release.id), cell(l.release.model), cell(l.release.version), cell(l.release.target_label()), state});
    }
    if (!lines.empty()) print_table(rows);
    std::vector<std::string> parts;
    for (VerifyState s : {VerifyState::kOk, VerifyState::kChanged, VerifyState::kMissing, VerifyState::kNotRetained, VerifyState::kDamaged}) {
      if (counts[s] > 0) parts.push_back(fmt::format("{} {}", counts[s], verify_state_name(s)));
    }
    rung::print("{}\n", parts.empty() ? std::string("nothing to verify") : fmt::format("{}", fmt::join(parts, ", ")));
  }
  if (bad) throw CliError(kExitFailed, "an artifact the registry retains has changed or is missing, or a release's row is damaged");
}

void run_import(const RegistryCliOptions& o) {
  {
    std::vector<NamedPath> inputs;
    for (const auto& r : o.records) inputs.push_back({"a record", r});
    check_registry_is_no_input(o, inputs);
  }
  auto records = read_documents(o.records, RegistryDocument::kBenchRecord);
  auto registry = open_registry(o, Registry::OpenMode::kCreateIfMissing);
  auto outcome = value_or_fail(registry.import_records(records));
  if (wants_json(o)) {
    emit(o, json{{"schema", "rung-registry-import"}, {"schema_version", 1}, {"registry", registry.describe()}, {"records", outcome.records},
                 {"measurements_new", outcome.measurements_new},
                 {"measurements_known", outcome.measurements_known}, {"devices", outcome.devices}});
  }
  if (o.json.on_stdout()) return;
  rung::print("{} · imported {} record{} from {} device{}: {} measurement{} new, {} already there\n", shown(registry.describe()), outcome.records,
             outcome.records == 1 ? "" : "s", outcome.devices, outcome.devices == 1 ? "" : "s", outcome.measurements_new,
             outcome.measurements_new == 1 ? "" : "s", outcome.measurements_known);
}

}  // namespace

void add_registry_command(CLI::App& app) {
  auto opt = std::make_shared<RegistryCliOptions>();
  auto* cmd = app.add_subcommand("registry", "Releases: what shipped, how it was made, where it was measured and how it behaved");
  cmd->require_subcommand(1);
  cmd->fallthrough();
  add_text(*cmd, "--registry", opt->url,
                  "The registry: a file path or sqlite:PATH (default: RUNG_REGISTRY, else $XDG_DATA_HOME/rung/registry.sqlite), or postgresql://...");

  auto* add = cmd->add_subcommand("add", "Register a release with its recipe, environment and evidence");
  add_text(*add, "artifact", opt->model, "NAME=PATH: the model's name and the artifact file")->required();
  add_text(*add, "--version", opt->version, "The release's version")->required();
  add_text(*add, "--rung", opt->rung, "The rung it targets (default cpu; a plugin's rung name with --plugin)");
  add_text(*add, "--plugin", opt->plugin, "The plugin EP library of a plugin rung (its SHA-256 is the provider's version)");
  add_text(*add, "--device-class", opt->device_class, "The target's device class (default: this machine's, e.g. \"x86_64 CPU\")");
  add_text(*add, "--ort", opt->ort_version, "The ONNX Runtime version it targets (default: the build rung chooses here)");
  opt->runtime.add_to(*add);
  add_text(*add, "--device", opt->device, "The target's hardware identity (default: this machine's, as rung doctor prints it)");
  add_text(*add, "--hardware-root", opt->hardware_root, "Read the hardware under this directory (tests)");
  auto* recipe = add_text(*add, "--recipe", opt->recipe_file, "The recipe: a JSON object (a rung quantise report)");
  auto* made_by = add_text(*add, "--made-by", opt->made_by, "The recipe: the command that made the artifact");
  recipe->excludes(made_by);
  add->add_flag("--gate-failed", opt->gate_failed,
                "Register a rung quantise report whose gates failed (decision forced or refused), marked so: without it such a report is refused");
  add_text(*add, "--setting", opt->settings, "A setting of --made-by's recipe, KEY=VALUE (repeatable)")->needs(made_by);
  add_text(*add, "--cache", opt->cache_file, "The engine or timing cache it was built with");
  add_text(*add, "--bench", opt->bench, "A bench record measured on the target (repeatable)");
  add_text(*add, "--parity", opt->parity, "A parity report (rung parity --out-json) whose candidate ran on the target (repeatable)");
  add_text(*add, "--not-retained", opt->not_retained, "The artifact is deliberately not kept, for this reason");
  add_text(*add, "--opaque", opt->opaque, "Its weights cannot be read (a compiled engine), for this reason");
  opt->json.add_to(*add, "the outcome");
  add->callback([opt] { run_add(*opt); });

  auto* list = cmd->add_subcommand("list", "List releases, or with --by-device the fleet's measurements");
  list->add_flag("--by-device", opt->by_device, "Per model, each device's rungs with p50 and output match side by side");
  opt->json.add_to(*list, "the releases (or the fleet)");
  list->callback([opt] { opt->by_device ? run_fleet(*opt) : run_list(*opt); });

  auto* show = cmd->add_subcommand("show", "Show releases in full: by id, MODEL or MODEL@VERSION");
  add_text(*show, "release", opt->what, "ID, MODEL or MODEL@VERSION")->required();
  opt->json.add_to(*show, "the releases");
  show->callback([opt] { run_show(*opt); });

  auto* verify = cmd->add_subcommand("verify", "Recompute every retained artifact's hashes: ok, changed, missing or not retained");
  opt->json.add_to(*verify, "the verdicts");
  verify->callback([opt] { run_verify(*opt); });

  auto* import = cmd->add_subcommand("import", "Append the measurements of bench records from any number of devices");
  add_text(*import, "records", opt->records, "Bench records (rung bench --out-json FILE)")->required();
  opt->json.add_to(*import, "the outcome");
  import->callback([opt] { run_import(*opt); });
}

}  // namespace rung::cli
