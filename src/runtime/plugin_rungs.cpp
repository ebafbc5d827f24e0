#include "runtime/plugin_rungs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "os/environment.h"
#include "os/library_files.h"
#include "os/path_trust.h"
#include "rung/directory.h"
#include "rung/input_words.h"
#include "rung/path_text.h"
#include "rung/setting_names.h"
#include "runtime/software_gpu.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// Read from the file, not by loading it: a plugin whose own dependencies are
// missing is still a rung (one that fails, saying which), and no plugin code runs
// in this process before the probe isolates it.
bool is_plugin_library(const fs::path& file) {
  return is_library_file_name(file.filename().string()) && library_exports_symbol(file, "CreateEpFactories") &&
         library_exports_symbol(file, "ReleaseEpFactory");
}

// "plugin directory X", "RUNG_PLUGIN_DIR=X", "plugin library X" refused for a reason, with the way to allow it.
// A refusal is the caller's input to fix: a usage error, like a missing directory.
Error refused(const std::string& what, const Error& why) {
  const bool allowable = why.code == ErrorCode::kPermission;
  const std::string allow = allowable ? setting_name(Setting::kAllowWritablePlugin) : std::string();
  return Error{allowable ? ErrorCode::kInvalidArgument : why.code,
               fmt::format("{}: refused, {}{}", what, why.message, allowable ? "; fix that" + (allow.empty() ? "" : ", or allow it with " + allow) : "")};
}

Status check_trusted(const std::string& what, const fs::path& path, bool allow_writable) {
  if (!path.is_absolute()) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: refused, not an absolute path (plugin libraries are loaded by absolute path only)", what)};
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) return missing_path(path, what);  // `what` names the path
  if (allow_writable) return {};
  if (auto s = check_path_trusted(path); !s) return refused(what, s.error());
  return {};
}

}  // namespace

std::string plugin_rung_name(const fs::path& library) {
  return library_stem(library.filename().string());
}

bool names_a_plugin_library(const std::string& named) {
  return named.find('/') != std::string::npos || is_library_file_name(named);
}

Status check_plugin_library(const fs::path& library, bool allow_writable) {
  return check_trusted(fmt::format("plugin library {}", library.string()), library, allow_writable);
}

Result<std::vector<RungSpec>> plugin_rungs(const std::vector<fs::path>& plugin_dirs, bool allow_writable, bool read_environment) {
  std::vector<std::pair<std::string, fs::path>> dirs;
  for (const auto& d : plugin_dirs) dirs.emplace_back(fmt::format("plugin directory {}", d.string()), d);
  if (auto env = rung_variable("RUNG_PLUGIN_DIR", read_environment)) dirs.emplace_back(fmt::format("RUNG_PLUGIN_DIR={}", *env), path_from_utf8(*env));
  std::vector<RungSpec> out;
  for (const auto& [what, dir] : dirs) {
    RUNG_RETURN_IF_ERROR(check_trusted(what, dir, allow_writable));
    auto listed = list_directory(dir);
    std::vector<fs::path> files = listed ? std::move(*listed) : std::vector<fs::path>{};
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (!is_plugin_library(f)) continue;
      RUNG_RETURN_IF_ERROR(check_plugin_library(f, allow_writable));
      out.push_back(plugin_rung(plugin_rung_name(f), f.string()));
    }
  }
  return out;
}

Result<std::vector<RungSpec>> effective_ladder(const Hardware& hardware, const RuntimeBuild& build, const std::vector<fs::path>& plugin_dirs,
                                               bool allow_writable_plugins, bool read_plugin_environment) {
  auto ladder = plugin_rungs(plugin_dirs, allow_writable_plugins, read_plugin_environment);
  if (!ladder) return ladder;
  for (auto& r : ladder_for(hardware).for_build(build.providers)) ladder->push_back(std::move(r));
  name_software_adapter(*ladder);
  return ladder;
}

}  // namespace rung
