// `rung registry add|list|show|verify|import`: releases with their recipe,
// environment, artifact and the behaviour measured on their target.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "runtime_args.h"
#include "rung/hardware.h"
#include "rung/registry.h"
#include "rung/runtime.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct RegistryCliOptions {
  std::string url;
  bool json = false;
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
[[noreturn]] void fail(const Error& e) { throw CliError(kExitUsage, e.message); }

template <class T>
T value_or_fail(Result<T> r) {
  if (!r) fail(r.error());
  return std::move(*r);
}

Registry open_registry(const RegistryCliOptions& o) { return value_or_fail(Registry::open(o.url.empty() ? Registry::default_url() : o.url)); }

std::string read_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CliError(kExitUsage, fmt::format("{}: cannot be read", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<EvidenceFile> read_documents(const std::vector<std::string>& paths) {
  std::vector<EvidenceFile> out;
  for (const auto& p : paths) out.push_back({p, read_document(p)});
  return out;
}

// The recipe: a JSON object from a file (a quantise report), or the command that made it and its settings.
std::string recipe_of(const RegistryCliOptions& o) {
  if (!o.recipe_file.empty()) {
    // Parsed (bounded, and compacted) by the registry, which refuses anything but an object.
    std::string text = read_document(o.recipe_file);
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') throw CliError(kExitUsage, fmt::format("--recipe {}: not a JSON object", o.recipe_file));
    return text;
  }
  if (o.made_by.empty()) {
    throw CliError(kExitUsage, "a release needs its recipe: --recipe FILE (a rung quantise report, any JSON object) or --made-by COMMAND");
  }
  json recipe = {{"command", o.made_by}, {"settings", json::object()}};
  for (const auto& s : o.settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw CliError(kExitUsage, fmt::format("--setting {}: expected KEY=VALUE", s));
    recipe["settings"][s.substr(0, eq)] = s.substr(eq + 1);
  }
  return recipe.dump();
}

// The runtime version a release targets: --ort, else the build rung would choose here.
std::string target_runtime_version(const RegistryCliOptions& o, const Hardware& hw) {
  if (!o.ort_version.empty()) return o.ort_version;
  RuntimeSearchOptions search;
  o.runtime.apply_to(search);
  auto discovery = discover_runtimes(search, hw);
  if (!discovery || discovery->chosen_build() == nullptr) {
    throw CliError(kExitNoRuntime, fmt::format("no ONNX Runtime build to take the target's version from ({}); give --ort VERSION",
                                               discovery ? discovery->choice_reason : discovery.error().message));
  }
  return discovery->chosen_build()->version;
}

Release release_of(const RegistryCliOptions& o) {
  Release r;
  const auto eq = o.model.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == o.model.size()) {
    throw CliError(kExitUsage, fmt::format("{}: the artifact is given as NAME=PATH (the model's name, then its file)", o.model));
  }
  r.model = o.model.substr(0, eq);
  r.version = o.version;
  auto [artifact, precision] = value_or_fail(inspect_artifact(o.model.substr(eq + 1), o.opaque));
  r.artifact = artifact;
  r.precision = precision;
  if (!o.not_retained.empty()) {
    r.artifact.retained = false;
    r.artifact.not_retained_reason = o.not_retained;
  }
  const Hardware hw = detect_hardware(o.hardware_root);
  r.target.rung = o.rung;
  r.target.device_class = o.device_class.empty() ? device_class_of(hw) : o.device_class;
  r.environment.device = o.device.empty() ? hw.identity() : o.device;
  r.environment.runtime_version = target_runtime_version(o, hw);
  r.environment.providers = value_or_fail(provider_versions(r.target.rung, r.environment.runtime_version, o.plugin));
  r.recipe_json = recipe_of(o);
  if (!o.cache_file.empty()) {
    // A cache is opaque bytes: only its hash enters the release key.
    r.cache_sha256 = value_or_fail(inspect_artifact(o.cache_file, "an engine or timing cache")).first.sha256;
    r.cache_file = fs::path(o.cache_file).filename().string();
  }
  return r;
}

std::string precision_text(const PrecisionEvidence& p) {
  if (p.kind == PrecisionEvidence::Kind::kNotInspected) return "not inspected";
  if (p.kind == PrecisionEvidence::Kind::kOpaque) return "opaque: " + p.opaque_why;
  std::string out;
  for (const auto& [type, c] : p.by_type) {
    out += fmt::format("{}{} {} ({} element{})", out.empty() ? "" : ", ", c.tensors, type, c.elements, c.elements == 1 ? "" : "s");
  }
  return out.empty() ? "no initializers" : out;
}

void print_release(const Release& r) {
  fmt::print("release {}: {} {} for {}\n", r.id, r.model, r.version, r.target_label());
  fmt::print("  key          {}\n", r.release_key());
  fmt::print("  artifact     {}\n", r.artifact.path.string());
  fmt::print("               sha256 {}\n", r.artifact.sha256);
  fmt::print("               stable {}\n", r.artifact.stable_sha256.empty() ? "(not an ONNX graph)" : r.artifact.stable_sha256);
  fmt::print("               {} bytes, {}\n", r.artifact.size_bytes, r.artifact.retained ? "retained" : "not retained: " + r.artifact.not_retained_reason);
  fmt::print("  precision    {}\n", precision_text(r.precision));
  fmt::print("  recipe       {}\n", r.recipe_json.size() > 160 ? r.recipe_json.substr(0, 157) + "..." : r.recipe_json);
  fmt::print("  environment  ORT {} · {}\n", r.environment.runtime_version, r.environment.device);
  for (const auto& [provider, version] : r.environment.providers) fmt::print("               {} {}\n", provider, version);
  fmt::print("  cache        {}\n", r.cache_sha256.empty() ? "none" : fmt::format("{} (sha256 {})", r.cache_file, r.cache_sha256));
  if (r.evidence.empty()) fmt::print("  evidence     none\n");
  for (std::size_t i = 0; i < r.evidence.size(); ++i) fmt::print("  {}{}\n", i == 0 ? "evidence     " : "             ", r.evidence[i].summary);
  fmt::print("  registered   {}\n", r.registered_at);
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
    fmt::print("{}\n", line);
  }
}

void run_add(const RegistryCliOptions& o) {
  Release release = release_of(o);
  auto registry = open_registry(o);
  auto outcome = value_or_fail(registry.add(release, read_documents(o.bench), read_documents(o.parity)));
  const char* kind = outcome.kind == AddOutcome::Kind::kAdded ? "added" : outcome.kind == AddOutcome::Kind::kAlreadyRegistered ? "already registered" : "refused";
  if (o.json) {
    json j = {{"outcome", kind}, {"reason", outcome.reason.empty() ? json(nullptr) : json(outcome.reason)}, {"evidence_added", outcome.evidence_added},
              {"release", outcome.kind == AddOutcome::Kind::kRefused ? json(nullptr) : json::parse(outcome.release.to_json())}};
    fmt::print("{}\n", j.dump(2));
  } else if (outcome.kind != AddOutcome::Kind::kRefused) {
    fmt::print("{} · {}{}\n", kind, registry.describe(),
               outcome.kind == AddOutcome::Kind::kAlreadyRegistered ? fmt::format(" · {} new evidence", outcome.evidence_added) : "");
    print_release(outcome.release);
  }
  if (outcome.kind == AddOutcome::Kind::kRefused) throw CliError(kExitFailed, "refused: " + outcome.reason);
}

void run_list(const RegistryCliOptions& o) {
  auto registry = open_registry(o);
  auto releases = value_or_fail(registry.list());
  if (o.json) {
    json list = json::array();
    for (const auto& r : releases) {
      list.push_back({{"id", r.id}, {"model", r.model}, {"version", r.version}, {"target", r.target_label()}, {"release_key", r.release_key()},
                      {"artifact_sha256", r.artifact.sha256}, {"retention", r.artifact.retained ? "retained" : "not retained: " + r.artifact.not_retained_reason},
                      {"evidence", evidence_counts(r)}});
    }
    fmt::print("{}\n", json{{"registry", registry.describe()}, {"releases", list}}.dump(2));
    return;
  }
  fmt::print("{} · {} release{}\n", registry.describe(), releases.size(), releases.size() == 1 ? "" : "s");
  if (releases.empty()) return;
  std::vector<std::vector<std::string>> rows = {{"id", "model", "version", "target", "artifact", "retention", "evidence"}};
  for (const auto& r : releases) {
    rows.push_back({std::to_string(r.id), r.model, r.version, r.target_label(), short_hash(r.artifact.sha256),
                    r.artifact.retained ? "retained" : "not retained", evidence_counts(r)});
  }
  print_table(rows);
}

std::string cell_text(const FleetDevice& d, const std::string& rung) {
  auto it = d.rungs.find(rung);
  if (it == d.rungs.end()) return "-";
  const FleetCell& c = it->second;
  if (!c.ok) return fmt::format("failed ({})", c.failure_class);
  const std::string p50 = c.p50_ms ? fmt::format("{:.3g} ms", *c.p50_ms) : "-";
  return fmt::format("{} {}", p50, c.output_match == "mismatch" ? "MISMATCH" : c.output_match);
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
  auto registry = open_registry(o);
  auto models = value_or_fail(registry.fleet());
  if (o.json) {
    fmt::print("{}\n", json{{"registry", registry.describe()}, {"models", fleet_json(models)}}.dump(2));
    return;
  }
  fmt::print("{} · {} model{} measured\n", registry.describe(), models.size(), models.size() == 1 ? "" : "s");
  for (const auto& m : models) {
    fmt::print("\n{} (sha256 {})\n", m.name, short_hash(m.sha256));
    std::vector<std::string> header = {"device", "ORT"};
    for (const auto& r : m.rungs) header.push_back(r);
    std::vector<std::vector<std::string>> rows = {header};
    for (const auto& d : m.devices) {
      std::vector<std::string> row = {d.device, d.runtime_version};
      for (const auto& r : m.rungs) row.push_back(cell_text(d, r));
      rows.push_back(std::move(row));
    }
    print_table(rows);
  }
}

void run_show(const RegistryCliOptions& o) {
  auto registry = open_registry(o);
  auto found = value_or_fail(registry.find(o.what));
  if (found.empty()) throw CliError(kExitUsage, fmt::format("no release '{}' in {} (give an id, MODEL or MODEL@VERSION)", o.what, registry.describe()));
  if (o.json) {
    json list = json::array();
    for (const auto& r : found) list.push_back(json::parse(r.to_json()));
    fmt::print("{}\n", (found.size() == 1 ? list[0] : list).dump(2));
    return;
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (i > 0) fmt::print("\n");
    print_release(found[i]);
  }
}

void run_verify(const RegistryCliOptions& o) {
  auto registry = open_registry(o);
  auto lines = value_or_fail(registry.verify());
  std::map<VerifyState, int> counts;
  for (const auto& l : lines) counts[l.state]++;
  const bool bad = counts[VerifyState::kChanged] > 0 || counts[VerifyState::kMissing] > 0;
  if (o.json) {
    json list = json::array();
    for (const auto& l : lines) {
      list.push_back({{"id", l.release.id}, {"model", l.release.model}, {"version", l.release.version}, {"target", l.release.target_label()},
                      {"path", l.release.artifact.path.string()}, {"state", verify_state_name(l.state)}, {"detail", l.detail}});
    }
    fmt::print("{}\n", json{{"registry", registry.describe()}, {"releases", list}, {"ok", !bad}}.dump(2));
  } else {
    fmt::print("{} · verifying {} release{}\n", registry.describe(), lines.size(), lines.size() == 1 ? "" : "s");
    std::vector<std::vector<std::string>> rows = {{"id", "model", "version", "target", "state"}};
    for (const auto& l : lines) {
      std::string state = verify_state_name(l.state);
      if (!l.detail.empty()) state += ": " + l.detail;
      rows.push_back({std::to_string(l.release.id), l.release.model, l.release.version, l.release.target_label(), state});
    }
    if (!lines.empty()) print_table(rows);
    std::vector<std::string> parts;
    for (VerifyState s : {VerifyState::kOk, VerifyState::kChanged, VerifyState::kMissing, VerifyState::kNotRetained}) {
      if (counts[s] > 0) parts.push_back(fmt::format("{} {}", counts[s], verify_state_name(s)));
    }
    fmt::print("{}\n", parts.empty() ? std::string("nothing to verify") : fmt::format("{}", fmt::join(parts, ", ")));
  }
  if (bad) throw CliError(kExitFailed, "an artifact the registry retains has changed or is missing");
}

void run_import(const RegistryCliOptions& o) {
  auto registry = open_registry(o);
  auto outcome = value_or_fail(registry.import_records(read_documents(o.records)));
  if (o.json) {
    fmt::print("{}\n", json{{"registry", registry.describe()}, {"records", outcome.records}, {"measurements_new", outcome.measurements_new},
                            {"measurements_known", outcome.measurements_known}, {"devices", outcome.devices}}
                           .dump(2));
    return;
  }
  fmt::print("{} · imported {} record{} from {} device{}: {} measurement{} new, {} already there\n", registry.describe(), outcome.records,
             outcome.records == 1 ? "" : "s", outcome.devices, outcome.devices == 1 ? "" : "s", outcome.measurements_new,
             outcome.measurements_new == 1 ? "" : "s", outcome.measurements_known);
}

}  // namespace

void add_registry_command(CLI::App& app) {
  auto opt = std::make_shared<RegistryCliOptions>();
  auto* cmd = app.add_subcommand("registry", "Releases: what shipped, how it was made, where it was measured and how it behaved");
  cmd->require_subcommand(1);
  cmd->fallthrough();
  cmd->add_option("--registry", opt->url,
                  "The registry: a file path or sqlite:PATH (default: RUNG_REGISTRY, else $XDG_DATA_HOME/rung/registry.sqlite), or postgresql://...");

  auto* add = cmd->add_subcommand("add", "Register a release with its recipe, environment and evidence");
  add->add_option("artifact", opt->model, "NAME=PATH: the model's name and the artifact file")->required();
  add->add_option("--version", opt->version, "The release's version")->required();
  add->add_option("--rung", opt->rung, "The rung it targets (default cpu; a plugin's rung name with --plugin)");
  add->add_option("--plugin", opt->plugin, "The plugin EP library of a plugin rung (its SHA-256 is the provider's version)");
  add->add_option("--device-class", opt->device_class, "The target's device class (default: this machine's, e.g. \"x86_64 CPU\")");
  add->add_option("--ort", opt->ort_version, "The ONNX Runtime version it targets (default: the build rung chooses here)");
  opt->runtime.add_to(*add);
  add->add_option("--device", opt->device, "The target's hardware identity (default: this machine's, as rung doctor prints it)");
  add->add_option("--hardware-root", opt->hardware_root, "Read the hardware under this directory (tests)");
  auto* recipe = add->add_option("--recipe", opt->recipe_file, "The recipe: a JSON object (a rung quantise report)");
  auto* made_by = add->add_option("--made-by", opt->made_by, "The recipe: the command that made the artifact");
  recipe->excludes(made_by);
  add->add_option("--setting", opt->settings, "A setting of --made-by's recipe, KEY=VALUE (repeatable)")->needs(made_by);
  add->add_option("--cache", opt->cache_file, "The engine or timing cache it was built with");
  add->add_option("--bench", opt->bench, "A bench record measured on the target (repeatable)");
  add->add_option("--parity", opt->parity, "A parity report (--json) whose candidate ran on the target (repeatable)");
  add->add_option("--not-retained", opt->not_retained, "The artifact is deliberately not kept, for this reason");
  add->add_option("--opaque", opt->opaque, "Its weights cannot be read (a compiled engine), for this reason");
  add->add_flag("--json", opt->json, "Print the outcome as JSON");
  add->callback([opt] { run_add(*opt); });

  auto* list = cmd->add_subcommand("list", "List releases, or with --by-device the fleet's measurements");
  list->add_flag("--by-device", opt->by_device, "Per model, each device's rungs with p50 and output match side by side");
  list->add_flag("--json", opt->json, "Print JSON");
  list->callback([opt] { opt->by_device ? run_fleet(*opt) : run_list(*opt); });

  auto* show = cmd->add_subcommand("show", "Show releases in full: by id, MODEL or MODEL@VERSION");
  show->add_option("release", opt->what, "ID, MODEL or MODEL@VERSION")->required();
  show->add_flag("--json", opt->json, "Print JSON");
  show->callback([opt] { run_show(*opt); });

  auto* verify = cmd->add_subcommand("verify", "Recompute every retained artifact's hashes: ok, changed, missing or not retained");
  verify->add_flag("--json", opt->json, "Print JSON");
  verify->callback([opt] { run_verify(*opt); });

  auto* import = cmd->add_subcommand("import", "Append the measurements of bench records from any number of devices");
  import->add_option("records", opt->records, "Bench records (rung bench --json)")->required();
  import->add_flag("--json", opt->json, "Print JSON");
  import->callback([opt] { run_import(*opt); });
}

}  // namespace rung::cli
