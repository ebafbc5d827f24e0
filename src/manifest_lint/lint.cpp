#include "rung/manifest_lint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "graph/model_file.h"
#include "os/json_input.h"
#include "rung/input_words.h"
#include "registry/records.h"
#include "rung/ladder.h"
#include "rung/registry.h"

namespace rung::variants {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string subject(const Group& g, const Variant& v) { return g.name + "/" + v.key; }

// A DEFAULT that is not the f32 file on the CPU: an accelerator's, or a quantised form the CPU runs.
bool needs_evidence(const Variant& v) { return v.accelerated() || v.form != NumericForm::kF32; }

// Each platform rung knows as a device would offer it at most: every rung of its
// ladder carried by the build, the deployment's plugin rungs above them, the CPU.
std::vector<core::StartFacts> every_platform(const Deployment& d) {
  std::vector<core::StartFacts> out;
  for (const auto& p : known_platforms()) {
    core::StartFacts f;
    f.platforms = {p.id};
    for (const auto& r : d.provisions) {
      if (find_rung(r) == nullptr) f.rungs.push_back(r);
    }
    f.rungs.insert(f.rungs.end(), p.rungs.begin(), p.rungs.end());
    f.rungs.push_back("cpu");
    out.push_back(std::move(f));
  }
  return out;
}

void check_file(const Group& g, const Variant& v, std::vector<Finding>& out) {
  std::error_code ec;
  if (!v.made_by.empty()) {
    // Not made yet, or a report that cannot be read, is a finding; a device that refused to make it has said why.
    if (v.made_by_report.empty()) {
      if (!v.refused_here) out.push_back({FindingKind::kFile, subject(g, v), v.unavailable});
      return;
    }
    const Variant* floor = g.floor();
    if (floor != nullptr && v.made_from != floor->sha256) {
      out.push_back({FindingKind::kFile, subject(g, v),
                     fmt::format("{} made it from other bytes (sha256 {}) than the f32 variant {} ({})", v.made_by.string(), v.made_from.substr(0, 12),
                                 floor->key, floor->sha256.substr(0, 12))});
    }
  }
  if (!fs::is_regular_file(v.file, ec)) {
    out.push_back({FindingKind::kFile, subject(g, v),
                   v.url.empty() ? fmt::format("its file {} is missing", v.file.string())
                                 : fmt::format("the cached copy {} of {} is missing", v.file.string(), v.url)});
    return;
  }
  auto facts = inspect_model_file(v.file);
  if (!facts) {
    out.push_back({FindingKind::kFile, subject(g, v), fmt::format("its file cannot be read as a model: {}", facts.error().message)});
    return;
  }
  if (facts->sha256 != v.sha256) {
    out.push_back({FindingKind::kFile, subject(g, v),
                   fmt::format("the hash differs: {} has sha256 {}, the manifest says {}", v.file.string(), facts->sha256, v.sha256)});
  }
  if (!v.stable_sha256.empty() && facts->stable_sha256 != v.stable_sha256) {
    out.push_back({FindingKind::kFile, subject(g, v),
                   fmt::format("the stable hash differs: {} has {}, the manifest says {}", v.file.string(), facts->stable_sha256, v.stable_sha256)});
  }
  // An fp16 engine is built from an f32 file, so only a quantised or f32 variant names its file's own form.
  if (v.form != NumericForm::kF16 && facts->form != v.form) {
    out.push_back({FindingKind::kFile, subject(g, v),
                   fmt::format("declared {}, but its graph is {} ({})", numeric_form_name(v.form), numeric_form_name(facts->form), facts->form_evidence)});
  }
}

void check_pins(const Group& g, std::vector<Finding>& out) {
  for (const auto& p : g.pins) {
    const std::string who = fmt::format("{} pin for {}", g.name, p.platform);
    bool blank = std::all_of(p.reason.begin(), p.reason.end(), [](unsigned char c) { return std::isspace(c); });
    if (blank) {
      out.push_back({FindingKind::kPin, who, fmt::format("pins {} without a reason", p.variant)});
    } else if (std::none_of(p.reason.begin(), p.reason.end(), [](unsigned char c) { return std::isdigit(c); })) {
      out.push_back({FindingKind::kPin, who, fmt::format("pins {} on a reason that quotes no measurement: \"{}\"", p.variant, p.reason)});
    }
  }
}

bool has_pin(const Group& g, const std::string& platform) {
  return std::any_of(g.pins.begin(), g.pins.end(), [&](const Pin& p) { return p.platform == platform || p.platform == kAnyPlatform; });
}

// A variant is reachable when a device offering only its rung (and the CPU) resolves to it by the declared
// order, or when a pin names it and some platform offers it.
std::string unreachable_why(const Group& g, const Variant& v, const std::vector<core::StartFacts>& platforms, const Deployment& d) {
  if (vetoed(g, v)) return fmt::format("the group is an embedder, which runs f32 only; this variant is {}", numeric_form_name(v.form));
  bool offered_somewhere = false, pinned = false;
  std::string shadow;
  for (const auto& f : platforms) {
    const auto offered = offered_rungs(f, &d);
    if (best_rung(v, offered).empty()) continue;
    offered_somewhere = true;
    pinned = pinned || std::any_of(g.pins.begin(), g.pins.end(), [&](const Pin& p) {
               const auto chain = p.chain();
               return std::find(chain.begin(), chain.end(), v.key) != chain.end() &&
                      (p.platform == kAnyPlatform || p.platform == f.platforms.front());
             });
    for (const auto& r : v.rungs) {
      if (std::find(offered.begin(), offered.end(), r) == offered.end()) continue;
      const Variant* earlier = nullptr;
      for (const auto& w : g.variants) {
        if (&w == &v) break;
        if (!vetoed(g, w) && (w.serves(r) || w.serves("cpu"))) {
          earlier = &w;
          break;
        }
      }
      if (earlier == nullptr) return "";
      shadow = earlier->key;
    }
  }
  if (pinned) return "";
  if (!offered_somewhere) {
    return fmt::format("no platform offers its rungs ({}) under the deployment, which provisions {}", fmt::join(v.rungs, ", "),
                       d.provisions.empty() ? std::string("the CPU only") : fmt::format("{}", fmt::join(d.provisions, ", ")));
  }
  return fmt::format("{}, declared before it, is taken wherever it is offered, and no pin names it", shadow);
}

// --- evidence in the registry ---

struct Beat {
  bool found = false;
  std::string best;  // the closest measurement, for the message
};

Beat beat_the_cpu(const Release& release, const std::string& rung) {
  Beat out;
  for (const auto& e : release.evidence) {
    if (e.kind != "bench") continue;
    auto rows = registry::measurement_rows(e.document, "bench evidence " + e.sha256.substr(0, 12));
    if (!rows) continue;
    std::map<std::string, std::pair<const registry::MeasurementRow*, const registry::MeasurementRow*>> by_measurement;
    for (const auto& r : *rows) {
      auto& slot = by_measurement[r.device + "|" + r.measured_at];
      if (r.rung == "cpu") slot.first = &r;
      if (r.rung == rung) slot.second = &r;
    }
    for (const auto& [_, pair] : by_measurement) {
      const auto* cpu = pair.first;
      const auto* acc = pair.second;
      if (!cpu || !acc || !cpu->ok || !acc->ok || !cpu->p50_ms || !acc->p50_ms) continue;
      out.best = fmt::format("{} p50 {:.3g} ms against the CPU's {:.3g} ms, output {}", rung, *acc->p50_ms, *cpu->p50_ms, acc->output_match);
      if (*acc->p50_ms < *cpu->p50_ms && acc->output_match == "match") {
        out.found = true;
        return out;
      }
    }
  }
  return out;
}

// A registry's evidence documents were written by other tools and may be damaged:
// read with the bounded parser, each value only when it has the kind it should.
const json& member(const json& j, const char* key) {
  static const json none;
  if (!j.is_object()) return none;
  auto it = j.find(key);
  return it != j.end() ? *it : none;
}

double number_or_zero(const json& j) { return j.is_number() ? j.get<double>() : 0.0; }

// Whether a decision gate's reference decided anything: the decisions issue's "vacuous" count where the
// report has it, else the reference's own decisions in the gate's figures.
bool decided_something(const json& gate, std::int64_t inputs) {
  const json& s = member(gate, "stats");
  if (auto vacuous = json_integer(member(s, "vacuous"), 0, std::numeric_limits<std::int64_t>::max())) return *vacuous < inputs;
  const std::string decoder = json_string_or(gate, "decoder", "");
  auto count = [&](const char* key) { return number_or_zero(member(s, key)); };
  if (decoder == "boxes" || decoder == "slots") return count("detections_ref") > 0;
  if (decoder == "text") return count("characters") > 0;
  if (decoder == "classification") return !member(s, "threshold").is_null() ? count("above_ref") > 0 : count("items") > 0;
  if (decoder == "embedding") return count("items") > 0;
  if (decoder == "mask") return count("masks") > 0;
  return false;
}

// "" when a passed parity report against the f32 floor has decision gates that all decided something.
std::string gates_problem(const Release& release, const Variant& floor) {
  std::string last = "no parity report";
  for (const auto& e : release.evidence) {
    if (e.kind != "parity") continue;
    const json report = parse_json_or_discarded(e.document);
    if (!report.is_object()) continue;
    const json& ref = member(member(report, "sides"), "ref");
    const std::string ref_sha = json_string_or(ref, "model_sha256", ""), ref_stable = json_string_or(ref, "model_stable_sha256", "");
    if (ref_sha != floor.sha256 && (floor.stable_sha256.empty() || ref_stable != floor.stable_sha256)) {
      last = fmt::format("a parity report against {} (sha256 {}), not the f32 variant {}", json_string_or(ref, "model_file", "?"),
                         ref_sha.substr(0, 12), floor.key);
      continue;
    }
    if (member(report, "passed") != json(true)) {
      last = "a parity report against the f32 variant that failed";
      continue;
    }
    const std::int64_t inputs = json_integer(member(report, "inputs"), 0, std::numeric_limits<std::int64_t>::max()).value_or(0);
    int decisions = 0;
    std::string vacuous;
    const json& gates = member(report, "gates");
    for (const auto& g : gates.is_array() ? gates : json::array()) {
      const json& decoder = member(g, "decoder");
      if (decoder.is_null() || decoder == "tensor") continue;
      ++decisions;
      if (!decided_something(g, inputs)) vacuous = json_string_or(g, "title", "a gate");
    }
    if (decisions == 0) {
      last = "a parity report against the f32 variant with tensor gates only: no decision gate";
    } else if (!vacuous.empty()) {
      last = fmt::format("a parity report whose gate '{}' is vacuous: the reference decided nothing on its {} inputs", vacuous, inputs);
    } else {
      return "";
    }
  }
  return last;
}

// A quantised form the CPU runs: its release's recipe is the `rung quantise`
// report that wrote it, from the group's f32 variant, every gate passed, and
// timed faster than that f32 file on the CPU.
// `whose`: "release 3's" or "made_by r.json's", for the message.
std::string cpu_form_problem(const std::string& recipe_json, const std::string& whose, const Variant& floor) {
  auto gates = recipe_gates(recipe_json);
  if (!gates) return fmt::format("{} recipe is no rung quantise report", whose);
  if (!gates->passed()) {
    return fmt::format("{} quantise report decided '{}'{}", whose, gates->decision,
                       gates->failed.empty() ? "" : fmt::format(" (failed: {})", fmt::join(gates->failed, ", ")));
  }
  const json report = parse_json_or_discarded(recipe_json);
  const json& source = member(report, "source");
  const std::string sha = json_string_or(source, "sha256", ""), stable = json_string_or(source, "stable_sha256", "");
  if (sha != floor.sha256 && (floor.stable_sha256.empty() || stable != floor.stable_sha256)) {
    return fmt::format("{} quantise report made it from {} (sha256 {}), not from the f32 variant {}", whose, json_string_or(source, "file", "?"),
                       sha.substr(0, 12), floor.key);
  }
  const json& speed = member(report, "speed");
  const std::string verdict = json_string_or(speed, "verdict", "");
  if (verdict != "faster") {
    return fmt::format("{} quantise report did not time it faster than f32 on the CPU ({})", whose, verdict.empty() ? std::string("not timed") : verdict);
  }
  return "";
}

std::string evidence_problem(Registry& registry, const std::vector<Release>& releases, const Group& g, const Variant& v) {
  if (v.release.empty()) return "it names no registry release";
  auto it = std::find_if(releases.begin(), releases.end(), [&](const Release& r) { return r.release_key() == v.release; });
  if (it == releases.end()) return fmt::format("its release {} is not in the registry ({})", v.release, registry.describe());
  auto full = registry.find(std::to_string(it->id));
  if (!full || full->empty()) return fmt::format("its release {} cannot be read: {}", v.release, full ? "gone" : full.error().message);
  const Release& r = full->front();
  if (r.artifact.sha256 != v.sha256 && (v.stable_sha256.empty() || r.artifact.stable_sha256 != v.stable_sha256)) {
    return fmt::format("its release {} is of other bytes (sha256 {}, the variant's is {})", it->id, r.artifact.sha256.substr(0, 12), v.sha256.substr(0, 12));
  }
  if (!v.serves(r.target.rung)) return fmt::format("its release {} targets rung {}, which the variant does not serve", it->id, r.target.rung);
  const Variant* floor = g.floor();
  if (floor == nullptr) return "the group has no f32 variant to gate it against";
  if (!v.accelerated()) return cpu_form_problem(r.recipe_json, fmt::format("release {}'s", r.id), *floor);
  auto beat = beat_the_cpu(r, r.target.rung);
  if (!beat.found) {
    return fmt::format("release {} has no bench measurement where {} beat the CPU with matching outputs{}", it->id, r.target.rung,
                       beat.best.empty() ? "" : " (seen: " + beat.best + ")");
  }
  if (auto why = gates_problem(r, *floor); !why.empty()) {
    return fmt::format("release {} has no passed, non-vacuous decision gates against {}: {}", it->id, floor->key, why);
  }
  return "";
}

}  // namespace

const char* finding_kind_name(FindingKind k) {
  switch (k) {
    case FindingKind::kFile: return "file";
    case FindingKind::kNoFloor: return "no-floor";
    case FindingKind::kUnpinned: return "unpinned";
    case FindingKind::kPin: return "pin";
    case FindingKind::kUnreachable: return "unreachable";
    case FindingKind::kUnprovisioned: return "unprovisioned";
    case FindingKind::kEvidence: return "evidence";
    case FindingKind::kUnnamed: return "unnamed";
  }
  return "?";
}

Result<std::vector<Finding>> lint(const Manifest& manifest, const Deployment& deployment, const LintOptions& options) {
  std::vector<Finding> out;
  const auto platforms = every_platform(deployment);
  // DEFAULTs other than the f32 file on the CPU, each with the platforms it is DEFAULT on: their evidence is checked once.
  std::vector<std::tuple<const Group*, const Variant*, std::vector<std::string>>> defaults;
  for (const auto& g : manifest.groups) {
    if (options.check_files) {
      for (const auto& v : g.variants) check_file(g, v, out);
    }
    if (g.floor() == nullptr) {
      out.push_back({FindingKind::kNoFloor, g.name, "has no f32 variant for the cpu rung: a device with no accelerator offered cannot load it"});
      continue;
    }
    check_pins(g, out);
    for (const auto& f : platforms) {
      const std::string& platform = f.platforms.front();
      const auto offered = offered_rungs(f, &deployment);
      std::vector<std::string> accelerated;
      for (const auto& v : g.variants) {
        if (!vetoed(g, v) && v.accelerated() && !best_rung(v, offered).empty()) accelerated.push_back(v.key);
      }
      if (accelerated.size() >= 2 && !has_pin(g, platform)) {
        out.push_back({FindingKind::kUnpinned, g.name + " on " + platform,
                       fmt::format("{} accelerated variants are offered ({}) and no pin says which one a benchmark chose", accelerated.size(),
                                   fmt::join(accelerated, ", "))});
      }
      auto narrowed = resolve(g, f, &deployment);
      auto unnarrowed = resolve(g, f, nullptr);
      if (narrowed && unnarrowed && !deployment.provisioned(unnarrowed->rung)) {
        out.push_back({FindingKind::kUnprovisioned, g.name + " on " + platform,
                       fmt::format("DEFAULT is {} on {}, which the deployment does not provision: it would silently fall back to {}",
                                   unnarrowed->variant->key, unnarrowed->rung, narrowed->variant->key)});
      }
      if (narrowed && needs_evidence(*narrowed->variant)) {
        auto known = std::find_if(defaults.begin(), defaults.end(), [&](const auto& d) { return std::get<1>(d) == narrowed->variant; });
        if (known == defaults.end()) {
          defaults.emplace_back(&g, narrowed->variant, std::vector<std::string>{platform});
        } else {
          std::get<2>(*known).push_back(platform);
        }
      }
    }
    for (const auto& v : g.variants) {
      if (&v == g.floor()) continue;  // every fallback loads it, and parity judges against it: never unreachable
      if (auto why = unreachable_why(g, v, platforms, deployment); !why.empty()) {
        out.push_back({FindingKind::kUnreachable, subject(g, v), "no platform can resolve to it: " + why});
      }
    }
  }
  // The registry is opened only to look a release up, and never created: a lint reads (a missing one is an error naming it).
  std::optional<Registry> registry;
  std::vector<Release> releases;
  for (const auto& [g, v, on] : defaults) {
    if (!v->release.empty() && !registry) {
      std::string url = options.registry_url;
      if (url.empty()) {
        auto default_url = Registry::default_url();
        if (!default_url) return default_url.error();
        url = *default_url;
      }
      auto opened = Registry::open(url, Registry::OpenMode::kExistingOnly);
      if (!opened) return opened.error();
      auto listed = opened->list();
      if (!listed) return listed.error();
      registry.emplace(std::move(*opened));
      releases = std::move(*listed);
    }
    std::string why;
    if (v->release.empty() && !v->made_by_report.empty() && !v->accelerated() && g->floor() != nullptr) {
      why = cpu_form_problem(v->made_by_report, v->made_by.string() + "'s", *g->floor());  // made here: its report is its evidence
    } else {
      why = v->release.empty() ? "it names no registry release" : evidence_problem(*registry, releases, *g, *v);
    }
    if (!why.empty()) {
      out.push_back({FindingKind::kEvidence, subject(*g, *v), fmt::format("DEFAULT on {}, but {}", fmt::join(on, ", "), why)});
    }
  }
  return out;
}

Result<std::vector<Finding>> scan(const Manifest& manifest, const fs::path& dir) {
  std::error_code ec;
  RUNG_RETURN_IF_ERROR(check_input_directory(dir, "--scan " + dir.string()));
  std::set<fs::path> named;
  for (const auto& g : manifest.groups) {
    for (const auto& v : g.variants) named.insert(fs::weakly_canonical(v.file, ec));
  }
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto ext = it->path().extension();
    if (it->is_regular_file(ec) && (ext == ".onnx" || ext == ".ort")) files.push_back(it->path());
  }
  if (ec) return Error{ErrorCode::kInvalidArgument, fmt::format("--scan {}: {}", dir.string(), ec.message())};
  std::sort(files.begin(), files.end());
  std::vector<Finding> out;
  for (const auto& f : files) {
    if (!named.count(fs::weakly_canonical(f, ec))) out.push_back({FindingKind::kUnnamed, f.string(), "a model file no variant names"});
  }
  return out;
}

}  // namespace rung::variants
