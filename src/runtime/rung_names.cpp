#include "rung/rung_names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "rung/ladder.h"
#include "runtime/plugin_rungs.h"
#include "runtime/software_gpu.h"
#include "rung/path_text.h"

namespace rung {

std::string rung_id(const std::string& named) {
  return names_a_plugin_library(named) ? plugin_rung_name(path_from_utf8(named)) : canonical_rung_name(named);
}

std::string rung_display_name(const std::string& named) {
  if (names_a_plugin_library(named)) return plugin_rung_name(path_from_utf8(named));
  if (const RungSpec* spec = find_rung(named)) return adapter_display(*spec);
  return named;
}

std::string unknown_rung_reason(const std::string& named) {
  if (names_a_plugin_library(named) || find_rung(named) != nullptr) return "";
  std::vector<std::string> ids;
  for (const auto& r : known_rungs()) ids.push_back(r.name);
  return fmt::format("no rung '{}': rung's rungs are {}, or a plugin EP library's path", named, fmt::join(ids, ", "));
}

}  // namespace rung
