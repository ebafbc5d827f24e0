#include "rung/standing.h"

#include <fmt/format.h>

#include <filesystem>

#include "rungs/libraries.h"
#include "runtime/dependencies.h"
#include "runtime/plugin_rungs.h"
#include "runtime/software_gpu.h"
#include "rung/path_text.h"

namespace rung {
namespace {

std::string not_in_build(const RuntimeBuild& build) { return fmt::format("not in ONNX Runtime {}", build.version); }

bool in_build(const RungSpec& rung, const RuntimeBuild& build) {
  return rung.append == AppendMethod::kPluginDevice || build.has_provider(rung.provider);
}

}  // namespace

std::string rung_blocked_reason(const RungSpec& rung, const RuntimeBuild& build) {
  if (rung.append == AppendMethod::kNone) return {};  // the CPU: always there
  if (!build.providers.empty() && !in_build(rung, build)) return not_in_build(build);
  const RungDependencies deps = check_rung_dependencies(rung, build);
  return deps.certain_to_fail ? deps.words() : std::string();
}

Result<std::vector<RungStanding>> ladder_standing(const Ladder& ladder, const RuntimeBuild& build,
                                                  const std::vector<std::filesystem::path>& plugin_dirs, bool allow_writable_plugins) {
  std::vector<RungStanding> out;
  const LoaderPaths paths = LoaderPaths::of_this_process();
  const auto dir = build.library.parent_path();
  auto plugins = plugin_rungs(plugin_dirs, allow_writable_plugins);
  if (!plugins) return plugins.error();
  std::vector<RungSpec> rungs = std::move(*plugins);
  for (auto& r : ladder.for_build(build.providers)) rungs.push_back(std::move(r));
  for (const auto& rung : rungs) {
    RungStanding s;
    s.rung = rung;
    s.rung.display = adapter_display(rung);
    s.provider_in_build = in_build(rung, build);
    if (!s.provider_in_build) {
      s.note = not_in_build(build);
      out.push_back(std::move(s));
      continue;
    }
    RungDependencies deps = check_rung_dependencies(rung, build, paths);
    for (const auto& name : deps.files) {
      std::error_code ec;
      const std::filesystem::path named = path_from_utf8(name);
      const std::filesystem::path file = named.is_absolute() ? named : dir / named;
      s.files.push_back({name, std::filesystem::exists(file, ec)});
    }
    for (const auto& lib : deps.libraries) {
      s.needs.push_back({lib.name, identify_library(lib.name).what, lib.needed_by, lib.path.string()});
    }
    s.provider_version = deps.provider_version;
    s.problems = deps.problems;
    s.ready = s.problems.empty();
    const bool software = s.rung.display != rung.display;
    s.note = !s.ready ? deps.words() : software ? "ready to probe on a software adapter (far slower than the CPU)" : "ready to probe";
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
