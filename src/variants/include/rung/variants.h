// Model variants: per model group, the files it ships in declared order (each
// for some rungs, in one numeric form, with its hashes and registry release)
// and the pins that override the order on a platform with their measured
// reason; the deployment (the rungs an application provisions); DEFAULT
// resolved per device when the engine starts (the lint an application's CI runs
// on them: manifest_lint.h). Schemas: schemas/variant-manifest.schema.json, schemas/deployment.schema.json.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rung/engine_core.h"
#include "rung/input_spec.h"
#include "rung/model.h"
#include "rung/result.h"

namespace rung::variants {

// A pin's platform that matches every platform (a plugin rung sits on any of them).
inline constexpr const char* kAnyPlatform = "any";

struct Variant {
  std::string key;                  // "cpu_f32", "qnn_a16w8", "tensorrt_f16"
  std::vector<std::string> rungs;   // the rungs that load it: ladder rung names or plugin rung names
  NumericForm form = NumericForm::kF32;
  std::filesystem::path file;       // the local file: the path given, or the URL's cached copy
  std::string url;                  // where it is published, when it is ("" for a local file)
  std::string sha256;
  std::string stable_sha256;        // graph/stable_hash.h: the same graph with other doc strings keeps it
  std::string release;              // the registry's release key, "" when none
  // A form made on the device that loads it ("file": {"path", "made_by"}): the
  // `rung quantise` report that made it pins its bytes in place of "sha256"
  // (its output's hashes are read into sha256 and stable_sha256).
  std::filesystem::path made_by;
  std::string made_by_report;       // that report's text, for the lint's evidence ("" until made)
  std::string made_from;            // the sha256 of the file it was made from, as its report says
  // Why this device cannot load it, "" when it can: not made yet, or this
  // device's `rung quantise` refused to make it. Resolution passes it over.
  std::string unavailable;
  bool refused_here = false;        // unavailable because this device's `rung quantise` refused to make it

  bool serves(const std::string& rung) const;
  bool accelerated() const { return !serves("cpu"); }
};

struct Pin {
  std::string platform;  // a platform id ("nvidia", "qualcomm-hexagon", ...) or "any"
  std::string variant;   // a key of the group
  std::string reason;    // with its numbers: "rung_sim_ep 14.5 ms against the CPU's 1.17 ms ..."
  // Where `variant` cannot load on a device (a form not made there), the next
  // of these that can, in order, before the declared order decides.
  std::vector<std::string> then;

  std::vector<std::string> chain() const;  // variant, then `then`
};

struct Group {
  std::string name;  // the model's name, as the engine registers it
  Role role = Role::kGeneric;
  InputSpec inputs;  // how the probe feeds it
  std::vector<Variant> variants;  // declared order: the first whose rung is offered is DEFAULT
  std::vector<Pin> pins;

  const Variant* find(const std::string& key) const;
  // The f32 variant the CPU serves: the floor every other variant falls back to, and parity's reference.
  const Variant* floor() const;
};

struct Manifest {
  std::filesystem::path path;
  std::vector<Group> groups;
};

struct Deployment {
  std::filesystem::path path;
  std::vector<std::string> provisions;  // rungs the application ships; the CPU is always there

  bool provisioned(const std::string& rung) const;
};

// ${NAME} in a path is `defaults`' NAME (an application's manifest_variable.NAME,
// the CLI's RUNG_DEPS_DIR), overridden by the environment's NAME only when
// `read_environment` (the CLI; an embedded engine when its application opts in);
// a relative path is relative to the manifest's directory.
using PathVariables = std::map<std::string, std::string>;

// Reads and checks a manifest: a clear kInvalidArgument naming the file and the
// entry (a duplicate key, a pin naming no variant, a form its rungs cannot run)
// or kNotFound when the file is not there. Files are not hashed here (see lint).
Result<Manifest> load_manifest(const std::filesystem::path& path, const PathVariables& defaults = {}, bool read_environment = true);
Result<Deployment> load_deployment(const std::filesystem::path& path);

// Parses a numeric form's name ("f32", "f16", "i8", "a16w8", "a16w16").
std::optional<NumericForm> parse_form(const std::string& name);
std::optional<Role> parse_role(const std::string& name);

// --- DEFAULT resolution: per group, the first variant in declared order whose
// rung this device offers (its hardware's ladder, the rungs the runtime build
// carries, the plugins, narrowed to what the deployment provisions), unless a
// pin for one of its platforms names another that is offered; an embedder
// vetoes non-f32. ---

struct Resolution {
  const Variant* variant = nullptr;
  std::string rung;          // the best offered rung it serves
  std::string pinned_for;    // the pin's platform, "" when the declared order decided
  std::string by_order;      // the key the declared order alone takes
  std::vector<std::string> passed_over;  // "tensorrt_f16 (tensorrt: not provisioned by the deployment)"
  std::string reason;        // "cpu_f32: pinned for any platform: ..."
};

// An embedder's outputs must compare across devices: it vetoes every non-f32 variant.
bool vetoed(const Group& group, const Variant& variant);
// The best of `offered` (best first) that the variant serves, "" when none.
std::string best_rung(const Variant& variant, const std::vector<std::string>& offered);

// The rungs offered: facts.rungs the deployment provisions (all of them without one), in ladder order.
std::vector<std::string> offered_rungs(const core::StartFacts& facts, const Deployment* deployment);

// kInvalidArgument naming the group and the rungs offered when no variant is served by one.
Result<Resolution> resolve(const Group& group, const core::StartFacts& facts, const Deployment* deployment);

// Sets the engine's models to the manifest's groups (their floor's f32 file until
// start resolves them) and has start() resolve each one and load its variant's file.
// Without a deployment every rung this device offers is provisioned.
Status attach(core::EngineOptions& options, const Manifest& manifest, const Deployment* deployment);

}  // namespace rung::variants
