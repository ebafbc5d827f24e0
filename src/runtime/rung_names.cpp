#include "rung/rung_names.h"

#include "rung/ladder.h"
#include "runtime/plugin_rungs.h"
#include "runtime/software_gpu.h"
#include "rung/path_text.h"

namespace rung {

std::string rung_id(const std::string& named) { return names_a_plugin_library(named) ? plugin_rung_name(path_from_utf8(named)) : named; }

std::string rung_display_name(const std::string& named) {
  if (names_a_plugin_library(named)) return plugin_rung_name(path_from_utf8(named));
  if (const RungSpec* spec = find_rung(named)) return adapter_display(*spec);
  return named;
}

}  // namespace rung
