#include "session/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "os/json_form.h"
#include "os/json_input.h"
#include "os/read_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

std::string plural_nodes(int n) { return n == 1 ? "node" : "nodes"; }

int percent(double share) { return static_cast<int>(std::lround(share * 100)); }

}  // namespace

int NodePlacement::total_nodes() const {
  int n = 0;
  for (const auto& p : providers) n += p.nodes;
  return n;
}

int NodePlacement::accelerated_nodes() const {
  int n = 0;
  for (const auto& p : providers) n += p.provider == kCpuProvider ? 0 : p.nodes;
  return n;
}

double NodePlacement::accelerated_node_share() const {
  const int total = total_nodes();
  return total > 0 ? static_cast<double>(accelerated_nodes()) / total : 0;
}

double NodePlacement::accelerated_time_share() const {
  double all = 0, accelerated = 0;
  for (const auto& p : providers) {
    all += p.kernel_us;
    if (p.provider != kCpuProvider) accelerated += p.kernel_us;
  }
  return all > 0 ? accelerated / all : 0;
}

double NodePlacement::rung_time_share(bool cpu_rung) const {
  double all = 0;
  for (const auto& p : providers) all += p.kernel_us;
  if (!cpu_rung || all <= 0) return accelerated_time_share();
  return 1.0 - accelerated_time_share();
}

std::string NodePlacement::accelerated_provider() const {
  for (const auto& p : providers) {
    if (p.provider != kCpuProvider && p.nodes > 0) return p.provider;
  }
  return {};
}

std::string NodePlacement::describe() const {
  if (!known) return "placement unknown (no profile)";
  const int total = total_nodes();
  std::string who = accelerated_provider();
  if (who.empty()) {
    return total == 0 ? "the profile names no node" : fmt::format("{} ran {} of {} {}", kCpuProvider, total, total, plural_nodes(total));
  }
  return fmt::format("{} ran {} of {} {}, {}% of run time", who, accelerated_nodes(), total, plural_nodes(total),
                     percent(accelerated_time_share()));
}

std::string NodePlacement::describe_all() const {
  double all = 0;
  for (const auto& p : providers) all += p.kernel_us;
  std::vector<std::string> parts;
  for (const auto& p : providers) {
    parts.push_back(fmt::format("{} ran {} {} ({}% of run time)", p.provider, p.nodes, plural_nodes(p.nodes),
                                percent(all > 0 ? p.kernel_us / all : 0)));
  }
  return parts.empty() ? "the profile names no node" : fmt::format("{}", fmt::join(parts, ", "));
}

void to_json(nlohmann::json& j, const ProviderShare& s) { j = {{"provider", s.provider}, {"nodes", s.nodes}, {"kernel_us", s.kernel_us}}; }

void from_json(const nlohmann::json& j, ProviderShare& s) {
  s.provider = j.at("provider");
  read_json(j.at("nodes"), s.nodes);
  read_json(j.at("kernel_us"), s.kernel_us);
}

void to_json(nlohmann::json& j, const NodePlacement& p) { j = {{"known", p.known}, {"providers", p.providers}}; }

void from_json(const nlohmann::json& j, NodePlacement& p) {
  p.known = j.at("known");
  read_json(j.at("providers"), p.providers);
}

NodePlacement read_profile_placement(const fs::path& profile) { return read_profile_placement(std::vector<fs::path>{profile}); }

NodePlacement read_profile_placement(const std::vector<fs::path>& profiles) {
  NodePlacement out;
  struct Seen {
    std::unordered_set<std::string> nodes;  // a set: a profile of 10 000 nodes is read in proportion to them
    double us = 0;
  };
  std::map<std::string, Seen> by_provider;
  std::map<std::pair<std::string, std::string>, Seen> by_op;  // (op, input type)
  const std::string suffix = "_kernel_time";
  for (const auto& profile : profiles) {
    auto j = parse_json_or_discarded(read_input_file_if_usable(profile, FileKind::kDocument).value_or(""));
    if (j.is_object() && j.contains("traceEvents")) j = j["traceEvents"];
    if (!j.is_array()) continue;
    out.known = true;
    for (const auto& e : j) {
      if (!e.is_object() || e.value("cat", "") != "Node") continue;
      std::string name = e.value("name", "");
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      if (!e.contains("args") || !e["args"].is_object()) continue;
      std::string provider = e["args"].value("provider", "");
      if (provider.empty()) continue;
      auto& seen = by_provider[provider];
      name.resize(name.size() - suffix.size());
      seen.nodes.insert(name);
      const double us = e.contains("dur") && e["dur"].is_number() ? e["dur"].get<double>() : 0.0;
      seen.us += us;
      std::string type;
      const auto& shapes = e["args"].contains("input_type_shape") ? e["args"]["input_type_shape"] : nlohmann::json();
      if (shapes.is_array() && !shapes.empty() && shapes[0].is_object() && !shapes[0].empty()) type = shapes[0].begin().key();
      auto& op = by_op[{e["args"].value("op_name", ""), type}];
      op.nodes.insert(std::move(name));
      op.us += us;
    }
  }
  for (const auto& [key, seen] : by_op) out.ops.push_back({key.first, key.second, static_cast<int>(seen.nodes.size()), seen.us});
  std::stable_sort(out.ops.begin(), out.ops.end(), [](const auto& a, const auto& b) { return a.kernel_us > b.kernel_us; });
  for (const auto& [p, seen] : by_provider) out.providers.push_back({p, static_cast<int>(seen.nodes.size()), seen.us});
  std::stable_sort(out.providers.begin(), out.providers.end(), [](const auto& a, const auto& b) { return a.nodes > b.nodes; });
  return out;
}

}  // namespace rung
