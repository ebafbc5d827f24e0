// A release as a record: its key, its label, its JSON; what an artifact file
// says about itself; the environment a release targets.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "rung/printable.h"
#include "graph/model_file.h"
#include "os/file_hash.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/machine.h"
#include "os/read_file.h"
#include "registry/records.h"
#include "rung/ladder.h"
#include "rung/registry.h"
#include "runtime/plugin_rungs.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
using json = nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

// The part of a recipe that says how builds are made (see Release::recipe_json).
json recipe_identity(const std::string& recipe_json) {
  json r = parse_json_or_discarded(recipe_json);
  if (r.is_discarded()) return recipe_json;
  if (r.is_object() && r.contains("recipe")) return r["recipe"];
  return r;
}

// JSON rung wrote itself (a column, a release's own form), or null if it is somehow not.
ordered parsed_or_null(std::string_view text) {
  auto j = parse_ordered_json(text);
  return j ? std::move(*j) : ordered(nullptr);
}

json environment_json(const ReleaseEnvironment& e) {
  return {{"runtime", {{"name", "onnxruntime"}, {"version", e.runtime_version}}}, {"device", e.device}, {"providers", e.providers}};
}

}  // namespace

std::optional<RecipeGates> recipe_gates(const std::string& recipe_json) {
  const json r = parse_json_or_discarded(recipe_json);
  if (!r.is_object() || json_string_or(r, "schema", "") != "rung-quantise-report") return std::nullopt;
  RecipeGates out;
  out.decision = json_string_or(r, "decision", "");
  auto add = [&out](const std::string& gate) {
    if (std::find(out.failed.begin(), out.failed.end(), gate) == out.failed.end()) out.failed.push_back(gate);
  };
  // A report may have been written or edited by another tool: each value is taken only when it has the kind it should.
  if (auto failed = r.find("failed"); failed != r.end() && failed->is_array()) {
    for (const auto& f : *failed) add(f.is_string() ? f.get<std::string>() : json_text(f));
  }
  auto gates = r.find("gates");
  if (gates == r.end() || !gates->is_array()) {
    add("(the report holds no gates)");
    return out;
  }
  std::size_t index = 0;
  for (const auto& g : *gates) {
    ++index;
    const auto passed = g.is_object() ? g.find("passed") : g.end();
    if (g.is_object() && passed != g.end() && *passed == json(true)) continue;
    add(json_string_or(g, "title", fmt::format("gate {}", index)));
  }
  return out;
}

std::string Release::release_key() const {
  if (!listed_key.empty()) return listed_key;
  // nlohmann::json keeps keys sorted, so the text (and the hash) does not depend on the order anything was given in.
  const json identity = {{"model", model},
                         {"version", version},
                         {"target", {{"device_class", target.device_class}, {"rung", target.rung}}},
                         {"recipe", recipe_identity(recipe_json)},
                         {"environment", environment_json(environment)},
                         {"cache", cache_sha256.empty() ? json(nullptr) : json(cache_sha256)}};
  // Replaced, not thrown: a recipe that is not JSON is kept as a string, and its bytes need not be UTF-8 (fuzz/quantise-report.cc).
  return sha256_hex(json_text(identity));
}

std::string Release::target_label() const {
  return fmt::format("{} / ORT {} / {}", target.device_class, environment.runtime_version, target.rung);
}

std::string Release::to_json() const {
  ordered evidence_list = ordered::array();
  for (const auto& e : evidence) {
    auto doc = parse_ordered_json(e.document);
    evidence_list.push_back({{"kind", e.kind}, {"sha256", e.sha256}, {"summary", e.summary}, {"document", doc ? std::move(*doc) : ordered(nullptr)}});
  }
  auto parsed = parse_ordered_json(recipe_json);
  ordered recipe = parsed ? std::move(*parsed) : ordered(ordered::value_t::discarded);
  ordered j = {{"id", id},
               {"release_key", release_key()},
               {"model", model},
               {"version", version},
               {"target", {{"device_class", target.device_class}, {"rung", target.rung}, {"label", target_label()}}},
               {"artifact",
                {{"path", artifact.path.string()},
                 {"sha256", artifact.sha256},
                 {"stable_sha256", artifact.stable_sha256.empty() ? ordered(nullptr) : ordered(artifact.stable_sha256)},
                 {"size_bytes", artifact.size_bytes},
                 {"retention", registry::retention_text(artifact)}}},
               {"recipe", recipe.is_discarded() ? ordered(recipe_json) : recipe},
               {"gate_failed", gate_failed ? ordered{{"decision", gate_failed->decision}, {"failed", gate_failed->failed}} : ordered(nullptr)},
               {"environment", ordered(environment_json(environment))},
               {"cache", cache_sha256.empty() ? ordered(nullptr) : ordered{{"sha256", cache_sha256}, {"file", cache_file}}},
               {"precision", parsed_or_null(registry::precision_json(precision))},
               {"evidence", evidence_list},
               {"registered_at", registered_at},
               {"damaged", damaged.empty() ? ordered(nullptr) : ordered(damaged)}};
  // Text a database holds may not be UTF-8 (written by another tool): replaced, never a throw.
  return json_text(j, 2);
}

std::string AddOutcome::to_json() const {
  const char* outcome = kind == Kind::kAdded ? "added" : kind == Kind::kAlreadyRegistered ? "already registered" : "refused";
  ordered j = {{"schema", "rung-registry-add"},
               {"schema_version", 1},
               {"outcome", outcome},
               {"reason", reason.empty() ? ordered(nullptr) : ordered(reason)},
               {"evidence_added", evidence_added},
               {"release", kind == Kind::kRefused ? ordered(nullptr) : parsed_or_null(release.to_json())}};
  return json_text(j, 2);
}

std::string show_json(const std::string& registry, const std::vector<Release>& releases) {
  ordered list = ordered::array();
  for (const auto& r : releases) list.push_back(parsed_or_null(r.to_json()));
  const ordered j = {{"schema", "rung-registry-show"}, {"schema_version", 1}, {"registry", registry}, {"releases", std::move(list)}};
  return json_text(j, 2);
}

Result<EvidenceFile> read_registry_document(const fs::path& path, RegistryDocument kind) {
  auto text = read_input_file(path, FileKind::kDocument, registry::document_limit(kind));
  if (!text) return Error{text.error().code, fmt::format("{} {}", registry::document_kind_name(kind), printable(text.error().message))};
  return EvidenceFile{path, std::move(*text)};
}

Result<std::string> opaque_file_sha256(const fs::path& file) {
  RUNG_RETURN_IF_ERROR(check_regular_file(file));
  return sha256_of_file(file);
}

Result<std::pair<ReleaseArtifact, PrecisionEvidence>> inspect_artifact(const fs::path& file, const std::string& opaque_why) {
  RUNG_RETURN_IF_ERROR(check_regular_file(file));
  std::error_code ec;
  ReleaseArtifact a;
  a.path = fs::absolute(file).lexically_normal();
  a.size_bytes = fs::file_size(file, ec);
  auto raw = sha256_of_file(file);
  if (!raw) return raw.error();
  a.sha256 = *raw;
  PrecisionEvidence p;
  auto facts = inspect_model_file(file);
  if (!facts && facts.error().code != ErrorCode::kInvalidArgument) return facts.error();
  if (!facts && opaque_why.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{} is not an ONNX model, so its weights cannot be read: say why with --opaque WHY "
                             "(\"tensorrt plan: weights are not inspectable\")",
                             file.string())};
  }
  if (facts) a.stable_sha256 = facts->stable_sha256;
  if (!opaque_why.empty()) {
    p.kind = PrecisionEvidence::Kind::kOpaque;
    p.opaque_why = opaque_why;
  } else if (facts->ep_context_nodes > 0) {
    p.kind = PrecisionEvidence::Kind::kOpaque;
    p.opaque_why = fmt::format("{} EPContext node{}: the weights are compiled into an execution provider's blob", facts->ep_context_nodes,
                               facts->ep_context_nodes == 1 ? "" : "s");
  } else {
    p.kind = PrecisionEvidence::Kind::kInitializers;
    for (const auto& [type, count] : facts->weights_by_type) p.by_type[type] = {count.tensors, count.elements};
  }
  return std::make_pair(a, p);
}

std::string device_class_of(const Hardware& hw) {
  const std::string machine = machine_architecture();
  if (hw.soc && !hw.soc->vendor.empty()) return fmt::format("{} {} SoC", machine, hw.soc->vendor);
  for (Vendor v : {Vendor::kNvidia, Vendor::kAmd, Vendor::kIntel, Vendor::kApple, Vendor::kQualcomm}) {
    if (hw.has_gpu(v)) return fmt::format("{} {} GPU", machine, vendor_name(v));
  }
  for (const auto& g : hw.soc_gpus) {  // a board's Mali or Adreno
    if (g.vendor != Vendor::kUnknown) return fmt::format("{} {} GPU", machine, vendor_name(g.vendor));
  }
  return fmt::format("{} CPU", machine);
}

Result<std::map<std::string, std::string>> provider_versions(const std::string& rung, const std::string& runtime_version,
                                                             const fs::path& plugin_library) {
  std::map<std::string, std::string> out;
  if (!plugin_library.empty()) {
    if (!same_rung_name(plugin_rung_name(plugin_library), rung)) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("the plugin {} is rung '{}', not '{}'", plugin_library.string(), plugin_rung_name(plugin_library), rung)};
    }
    auto hash = sha256_of_file(plugin_library);
    if (!hash) return hash.error();
    out[rung] = "sha256:" + *hash;
    return out;
  }
  const RungSpec* spec = find_rung(rung);
  if (spec == nullptr) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("'{}' is not a rung of rung's ladders; a plugin rung needs its library (--plugin PATH)", rung)};
  }
  out[spec->provider] = runtime_version;
  return out;
}

const char* verify_state_name(VerifyState s) {
  switch (s) {
    case VerifyState::kOk: return "ok";
    case VerifyState::kChanged: return "changed";
    case VerifyState::kMissing: return "missing";
    case VerifyState::kNotRetained: return "not retained";
    case VerifyState::kDamaged: return "damaged";
  }
  return "?";
}

}  // namespace rung
