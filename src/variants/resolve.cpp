#include "rung/variants.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "rung/ladder.h"

namespace rung::variants {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Why a variant is not taken here, in a few words.
std::string why_not(const Group& g, const Variant& v, const core::StartFacts& facts) {
  if (vetoed(g, v)) return fmt::format("vetoed: an embedder runs f32, this is {}", numeric_form_name(v.form));
  if (!v.unavailable.empty()) return v.unavailable;
  std::vector<std::string> parts;
  for (const auto& r : v.rungs) {
    parts.push_back(!contains(facts.rungs, r) ? fmt::format("{}: not on this device and build", r)
                                              : fmt::format("{}: not provisioned by the deployment", r));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string where(const std::string& rung, const core::StartFacts& facts) {
  if (rung == "cpu") return "the floor";
  for (const auto& id : facts.platforms) {
    for (const auto& p : known_platforms()) {
      if (p.id == id && contains(p.rungs, rung)) return p.description;
    }
  }
  return find_rung(rung) ? "this build" : "a plugin EP";
}

std::string platform_label(const std::string& id) {
  if (id == kAnyPlatform) return "any platform";
  for (const auto& p : known_platforms()) {
    if (p.id == id) return fmt::format("{} ({})", id, p.description);
  }
  return id;
}

}  // namespace

bool vetoed(const Group& g, const Variant& v) { return g.role == Role::kEmbedder && v.form != NumericForm::kF32; }

std::string best_rung(const Variant& v, const std::vector<std::string>& offered) {
  for (const auto& r : offered) {
    if (v.serves(r)) return r;
  }
  return "";
}

std::vector<std::string> offered_rungs(const core::StartFacts& facts, const Deployment* deployment) {
  std::vector<std::string> out;
  for (const auto& r : facts.rungs) {
    if (deployment == nullptr || deployment->provisioned(r)) out.push_back(r);
  }
  return out;
}

Result<Resolution> resolve(const Group& g, const core::StartFacts& facts, const Deployment* deployment) {
  const auto offered = offered_rungs(facts, deployment);
  auto usable = [&](const Variant& v) { return !vetoed(g, v) && v.unavailable.empty() && !best_rung(v, offered).empty(); };
  Resolution out;
  for (const auto& v : g.variants) {
    if (usable(v)) {
      out.variant = &v;
      break;
    }
    out.passed_over.push_back(fmt::format("{} ({})", v.key, why_not(g, v, facts)));
  }
  if (out.variant == nullptr) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("group {}: no variant is served by a rung offered here ({}): {}", g.name,
                                                          fmt::join(offered, ", "), fmt::join(out.passed_over, "; "))};
  }
  out.by_order = out.variant->key;
  // A pin for one of this device's platforms, best platform first, then one for any platform.
  std::vector<std::string> platforms = facts.platforms;
  platforms.push_back(kAnyPlatform);
  for (const auto& platform : platforms) {
    auto pin = std::find_if(g.pins.begin(), g.pins.end(), [&](const Pin& p) { return p.platform == platform; });
    if (pin == g.pins.end()) continue;
    // The pinned variant, else the first of its `then` that this device can load.
    const Variant* pinned = nullptr;
    std::vector<std::string> skipped;
    for (const auto& key : pin->chain()) {
      const Variant* candidate = g.find(key);
      if (candidate != nullptr && usable(*candidate)) {
        pinned = candidate;
        break;
      }
      if (candidate != nullptr) skipped.push_back(fmt::format("{} ({})", key, why_not(g, *candidate, facts)));
    }
    if (pinned == nullptr) continue;  // a pin to what is not offered here leaves the order to decide
    out.variant = pinned;
    out.pinned_for = platform;
    out.reason = fmt::format("{}: pinned for {}{}: {}", pinned->key, platform_label(platform),
                             skipped.empty() ? "" : fmt::format(" after {}", fmt::join(skipped, "; ")), pin->reason);
    if (pinned->key != out.by_order) out.reason += fmt::format(" (the declared order would take {})", out.by_order);
    break;
  }
  out.rung = best_rung(*out.variant, offered);
  if (out.pinned_for.empty()) {
    out.reason = fmt::format("{}: first declared whose rung is offered here ({}, {})", out.variant->key, out.rung, where(out.rung, facts));
    if (!out.passed_over.empty()) out.reason += fmt::format("; passed over {}", fmt::join(out.passed_over, ", "));
  }
  return out;
}

Status attach(core::EngineOptions& options, const Manifest& manifest, const Deployment* deployment) {
  options.models.clear();
  for (const auto& g : manifest.groups) {
    const Variant* floor = g.floor();
    if (floor == nullptr) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("{}: group {} has no f32 variant for the cpu rung, the floor every device has",
                                                            manifest.path.string(), g.name)};
    }
    ModelRegistration m;
    m.name = g.name;
    m.role = g.role;
    m.f32 = floor->file;
    m.inputs = g.inputs;
    options.models.push_back(std::move(m));
  }
  auto held = std::make_shared<Manifest>(manifest);
  auto provisioned = deployment != nullptr ? std::make_shared<Deployment>(*deployment) : nullptr;
  options.choose_models = [held, provisioned](const core::StartFacts& facts,
                                              std::vector<ModelRegistration>& models) -> Result<std::map<std::string, core::ModelChoice>> {
    std::map<std::string, core::ModelChoice> choices;
    for (auto& m : models) {
      auto g = std::find_if(held->groups.begin(), held->groups.end(), [&](const Group& x) { return x.name == m.name; });
      if (g == held->groups.end()) continue;
      auto r = resolve(*g, facts, provisioned.get());
      if (!r) return r.error();
      const Variant& v = *r->variant;
      // The CPU keeps the floor's f32 file; an f32 variant is an f32 file the CPU can run as well.
      m.f32 = v.form == NumericForm::kF32 ? v.file : g->floor()->file;
      m.derived.clear();
      if (v.form != NumericForm::kF32) m.derived.push_back({v.form, v.file});
      m.rungs = v.rungs;
      choices[m.name] = {v.key, model_id(m.name, v.form), r->reason};
    }
    return choices;
  };
  return {};
}

}  // namespace rung::variants
