#include "jobs/profile_placement.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "os/json_input.h"
#include "os/read_file.h"

namespace rung {

std::vector<std::pair<std::string, int>> nodes_by_provider(const std::filesystem::path& profile) {
  std::map<std::string, std::vector<std::string>> nodes;
  auto j = parse_json_or_discarded(read_text_file(profile));
  if (j.is_object() && j.contains("traceEvents")) j = j["traceEvents"];
  if (!j.is_array()) return {};
  const std::string suffix = "_kernel_time";
  for (const auto& e : j) {
    if (!e.is_object() || e.value("cat", "") != "Node") continue;
    std::string name = e.value("name", "");
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (!e.contains("args") || !e["args"].is_object()) continue;
    std::string provider = e["args"].value("provider", "");
    if (provider.empty()) continue;
    auto& list = nodes[provider];
    name.resize(name.size() - suffix.size());
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [p, list] : nodes) out.emplace_back(p, static_cast<int>(list.size()));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace rung
