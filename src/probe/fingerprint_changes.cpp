// What changed between two fingerprints, as a person reads it (probe/fingerprint.h).
// Apart from make_fingerprint: it reads JSON alone, so the cache's fuzzer and the
// Windows build take it without the hashing behind the fingerprint.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "probe/fingerprint.h"
#include "rung/json_text.h"

namespace rung {
namespace {

// A value as a change names it: text as it is, anything else as JSON, cut short.
std::string shown(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : json_text(v);
  return s.size() > 64 ? s.substr(0, 61) + "..." : s;
}

const nlohmann::json& at(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

// Each key of two objects whose values differ: "threads 0 → 1"; a key on one side only: "seed (new)".
std::vector<std::string> keys_changed(const nlohmann::json& was, const nlohmann::json& now) {
  std::vector<std::string> out;
  if (!was.is_object() || !now.is_object()) return {fmt::format("{} → {}", shown(was), shown(now))};
  for (const auto& [k, v] : now.items()) {
    if (!was.contains(k)) {
      out.push_back(k + " (new)");
    } else if (was[k] != v) {
      out.push_back(fmt::format("{} {} → {}", k, shown(was[k]), shown(v)));
    }
  }
  for (const auto& [k, v] : was.items()) {
    if (!now.contains(k)) out.push_back(k + " (gone)");
  }
  return out;
}

// Entries of a list keyed by "name": each added, removed or changed, by name.
void named_changes(const char* what, const nlohmann::json& was, const nlohmann::json& now, std::vector<std::string>& out) {
  auto by_name = [](const nlohmann::json& list) {
    std::vector<std::pair<std::string, const nlohmann::json*>> m;
    if (list.is_array()) {
      for (const auto& e : list) m.emplace_back(at(e, "name").is_string() ? at(e, "name").get<std::string>() : shown(e), &e);
    }
    return m;
  };
  const auto before = by_name(was), after = by_name(now);
  auto find = [](const auto& m, const std::string& name) -> const nlohmann::json* {
    for (const auto& [n, e] : m) {
      if (n == name) return e;
    }
    return nullptr;
  };
  for (const auto& [name, e] : after) {
    const nlohmann::json* old = find(before, name);
    if (old == nullptr) {
      out.push_back(fmt::format("{} {}: new", what, name));
      continue;
    }
    if (*old == *e) continue;
    std::vector<std::string> parts;
    for (const auto& [k, v] : e->items()) {
      if (!old->contains(k) || (*old)[k] != v) parts.push_back(k == "sha256" ? "its file" : k == "plugin_sha256" ? "its plugin library" : k);
    }
    for (const auto& [k, v] : old->items()) {
      if (!e->contains(k)) parts.push_back(k + " (gone)");
    }
    out.push_back(fmt::format("{} {}: {}", what, name, fmt::join(parts, ", ")));
  }
  for (const auto& [name, e] : before) {
    if (find(after, name) == nullptr) out.push_back(fmt::format("{} {}: gone", what, name));
  }
}

}  // namespace

std::vector<std::string> fingerprint_changes(const nlohmann::json& was, const nlohmann::json& now) {
  std::vector<std::string> out;
  if (!was.is_object() || !now.is_object()) return {"the fingerprint's form"};
  const nlohmann::json &rt_was = at(was, "runtime"), &rt_now = at(now, "runtime");
  if (rt_was != rt_now) {
    // The version says most; a build rebuilt in place is "its file".
    if (at(rt_was, "version") != at(rt_now, "version")) {
      out.push_back(fmt::format("the runtime: version {} → {}", shown(at(rt_was, "version")), shown(at(rt_now, "version"))));
    } else if (at(rt_was, "api_version") != at(rt_now, "api_version")) {
      out.push_back(fmt::format("the runtime: API version {} → {}", shown(at(rt_was, "api_version")), shown(at(rt_now, "api_version"))));
    } else if (at(rt_was, "path") != at(rt_now, "path")) {
      out.push_back(fmt::format("the runtime: {} → {}", shown(at(rt_was, "path")), shown(at(rt_now, "path"))));
    } else if (at(rt_was, "providers") != at(rt_now, "providers")) {
      out.push_back("the runtime: its providers");
    } else {
      out.push_back("the runtime: its file");
    }
  }
  if (at(was, "device") != at(now, "device")) out.push_back(fmt::format("the device: {} → {}", shown(at(was, "device")), shown(at(now, "device"))));
  if (at(was, "models") != at(now, "models")) named_changes("model", at(was, "models"), at(now, "models"), out);
  if (at(was, "probe_models") != at(now, "probe_models")) {
    out.push_back(fmt::format("the probe models: {} → {}", shown(at(was, "probe_models")), shown(at(now, "probe_models"))));
  }
  if (at(was, "ladder") != at(now, "ladder")) named_changes("rung", at(was, "ladder"), at(now, "ladder"), out);
  if (at(was, "settings") != at(now, "settings")) {
    out.push_back(fmt::format("the settings: {}", fmt::join(keys_changed(at(was, "settings"), at(now, "settings")), ", ")));
  }
  for (const auto& [k, v] : now.items()) {
    if (!was.contains(k)) out.push_back(fmt::format("the fingerprint's form ({} is new)", k));
  }
  if (out.empty() && was != now) out.push_back("the fingerprint's form");
  return out;
}

}  // namespace rung
