#include "rungs/module.h"

#include <algorithm>

namespace rung {

// The modules the build found in src/rungs/ (cmake/rung_modules.cmake writes the list).
#define RUNG_MODULE_ENTRY(id) RungModule rung_module_##id();
#include "rung_module_list.inc"
#undef RUNG_MODULE_ENTRY

const std::vector<RungModule>& rung_modules() {
  static const std::vector<RungModule> modules = [] {
    std::vector<RungModule> out;
#define RUNG_MODULE_ENTRY(id) out.push_back(rung_module_##id());
#include "rung_module_list.inc"
#undef RUNG_MODULE_ENTRY
    std::stable_sort(out.begin(), out.end(), [](const RungModule& a, const RungModule& b) { return a.rank < b.rank; });
    return out;
  }();
  return modules;
}

const RungModule* module_of(const RungSpec& rung) {
  if (rung.append == AppendMethod::kPluginDevice) return nullptr;
  for (const auto& m : rung_modules()) {
    if (m.spec.name == rung.name) return &m;
  }
  return nullptr;
}

std::map<std::string, std::string> provider_option_map(const RungSpec& rung, const ProviderSettings& settings) {
  std::map<std::string, std::string> o;
  if (const RungModule* m = module_of(rung); m != nullptr && m->provider_options != nullptr) o = m->provider_options(settings);
  for (const auto& [k, v] : settings.extra) o[k] = v;
  return o;
}

std::map<std::string, std::string> run_option_map(const RungSpec& rung) {
  const RungModule* m = module_of(rung);
  return m != nullptr ? m->run_options : std::map<std::string, std::string>{};
}

}  // namespace rung
