#include "rung/standing.h"

#include <fmt/format.h>

#include <filesystem>

#include "runtime/software_gpu.h"

namespace rung {

std::vector<RungStanding> ladder_standing(const Ladder& ladder, const RuntimeBuild& build) {
  std::vector<RungStanding> out;
  const auto dir = build.library.parent_path();
  for (const auto& rung : ladder.for_build(build.providers)) {
    RungStanding s;
    s.rung = rung;
    s.rung.display = adapter_display(rung);
    s.provider_in_build = rung.append == AppendMethod::kPluginDevice || build.has_provider(rung.provider);
    std::string missing;
    for (const auto& name : rung.provider_libraries) {
      std::error_code ec;
      bool present = std::filesystem::exists(dir / name, ec);
      s.files.push_back({name, present});
      if (!present && missing.empty()) missing = name;
    }
    if (rung.append == AppendMethod::kPluginDevice) {
      std::error_code ec;
      bool present = std::filesystem::exists(rung.plugin_library, ec);
      s.files.push_back({rung.plugin_library, present});
      if (!present && missing.empty()) missing = rung.plugin_library;
    }
    if (!s.provider_in_build) {
      s.note = fmt::format("not in ONNX Runtime {}", build.version);
    } else if (!missing.empty()) {
      s.note = fmt::format("{} not found", missing);
    } else {
      s.ready = true;
      s.note = s.rung.display != rung.display ? "ready to probe on a software adapter (far slower than the CPU)" : "ready to probe";
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string about_line(const std::string& rung_display, const RuntimeDiscovery& discovery) {
  const RuntimeBuild* chosen = discovery.chosen_build();
  std::size_t found = discovery.builds.size();
  return fmt::format("{} · ONNX Runtime {} · {} build{} found", rung_display, chosen ? chosen->version : "none", found,
                     found == 1 ? "" : "s");
}

}  // namespace rung
