#include "runtime/plugin_rungs.h"

#include <algorithm>
#include <cstdlib>

#include "os/elf_dynamic.h"
#include "runtime/software_gpu.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// Read from the file, not by loading it: a plugin whose own dependencies are
// missing is still a rung (one that fails, saying which), and no plugin code runs
// in this process before the probe isolates it.
bool is_plugin_library(const fs::path& file) {
  return file.extension() == ".so" && elf_exports_symbol(file, "CreateEpFactories") && elf_exports_symbol(file, "ReleaseEpFactory");
}

}  // namespace

std::string plugin_rung_name(const fs::path& library) {
  std::string name = library.stem().string();
  return name.rfind("lib", 0) == 0 ? name.substr(3) : name;
}

std::vector<RungSpec> plugin_rungs(const std::vector<fs::path>& plugin_dirs) {
  std::vector<fs::path> dirs = plugin_dirs;
  if (const char* env = std::getenv("RUNG_PLUGIN_DIR"); env != nullptr && *env) dirs.emplace_back(env);
  std::vector<RungSpec> out;
  for (const auto& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (!is_plugin_library(f)) continue;
      out.push_back(plugin_rung(plugin_rung_name(f), fs::absolute(f).string()));
    }
  }
  return out;
}

std::vector<RungSpec> effective_ladder(const Hardware& hardware, const RuntimeBuild& build, const std::vector<fs::path>& plugin_dirs) {
  std::vector<RungSpec> ladder = plugin_rungs(plugin_dirs);
  for (auto& r : ladder_for(hardware).for_build(build.providers)) ladder.push_back(std::move(r));
  name_software_adapter(ladder);
  return ladder;
}

}  // namespace rung
