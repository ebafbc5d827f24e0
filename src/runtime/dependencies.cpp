#include "runtime/dependencies.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rungs/libraries.h"
#include "os/elf_dynamic.h"
#include "os/library_files.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// ONNX Runtime's own provider files, which speak to the core through the bridge.
constexpr std::string_view kProviderStem = "onnxruntime_providers_";

// ONNX Runtime's versions are "1.<two or more digits>.<patch>".
bool looks_like_onnxruntime_version(std::string_view s) {
  if (s.size() < 6 || s.substr(0, 2) != "1.") return false;
  auto dot = s.find('.', 2);
  if (dot == std::string_view::npos || dot < 4 || dot + 1 == s.size()) return false;
  return std::all_of(s.begin() + 2, s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }) &&
         s.find('.', dot + 1) == std::string_view::npos;
}

// A library the loader cannot find may still sit in a directory a person would
// look in (beside the provider, in the runtime directory): say where it is.
std::string found_off_the_path(const ResolvedLibrary& lib, const std::vector<fs::path>& dirs) {
  for (const auto& d : dirs) {
    std::error_code ec;
    if (fs::exists(d / path_from_utf8(lib.name), ec)) return d.string();
  }
  return {};
}

std::string needed_by_suffix(const ResolvedLibrary& lib, const std::set<std::string>& own_files) {
  return own_files.count(lib.needed_by) != 0 ? "" : fmt::format(", needed by {}", lib.needed_by);
}

// The problems of one resolution, in words; libraries simply not found are
// gathered so that one product's files are said in one clause.
void describe(const std::vector<ResolvedLibrary>& libraries, const std::set<std::string>& own_files,
              const std::vector<fs::path>& look_also, std::vector<std::string>& problems) {
  std::vector<std::string> not_found;  // needed by the rung's own files: one clause, where the first came
  std::size_t not_found_at = 0;
  for (const auto& lib : libraries) {
    const LibraryIdentity id = identify_library(lib.name);
    const std::string by = needed_by_suffix(lib, own_files);
    if (!lib.found()) {
      if (auto dir = found_off_the_path(lib, look_also); !dir.empty()) {
        problems.push_back(fmt::format("{} ({}) is in {} but not on the loader's search path{}", id.product, lib.name, dir, by));
      } else if (!lib.other_versions.empty()) {
        problems.push_back(other_version_words(lib.name, lib.other_versions.back()) + by);
      } else if (!lib.other_architecture.empty()) {
        problems.push_back(fmt::format("{} ({}) at {} is for another architecture{}", id.product, lib.name,
                                       lib.other_architecture.front().string(), by));
      } else if (by.empty()) {
        if (not_found.empty()) not_found_at = problems.size();
        not_found.push_back(lib.name);
      } else {
        problems.push_back(missing_libraries_words({lib.name}) + by);
      }
    } else if (!lib.unusable.empty()) {
      problems.push_back(fmt::format("{} ({}) at {} is {}{}", id.product, lib.name, lib.path.string(), lib.unusable, by));
    } else if (!lib.missing_versions.empty()) {
      problems.push_back(lacking_versions_words(lib.name, lib.path.string(), lib.missing_versions, lib.needed_by));
    }
  }
  if (!not_found.empty()) {
    problems.insert(problems.begin() + static_cast<std::ptrdiff_t>(not_found_at), missing_libraries_words(not_found));
  }
}

}  // namespace

std::string RungDependencies::words() const { return fmt::format("{}", fmt::join(problems, "; ")); }

std::string provider_onnxruntime_version(const fs::path& provider, const std::string& core_version) {
  auto found = elf_section_strings(provider, ".rodata", looks_like_onnxruntime_version);
  std::set<std::string> versions(found.begin(), found.end());
  if (versions.count(core_version) != 0) return core_version;
  return versions.size() == 1 ? *versions.begin() : std::string();
}

RungDependencies check_rung_dependencies(const RungSpec& rung, const RuntimeBuild& build, const LoaderPaths& paths) {
  RungDependencies out;
  const fs::path dir = build.library.parent_path();
  const std::string core = build.library.filename().string();
  std::vector<fs::path> present;
  if (rung.append == AppendMethod::kPluginDevice) {
    out.files.push_back(rung.plugin_library);
    std::error_code ec;
    if (!fs::exists(path_from_utf8(rung.plugin_library), ec)) {
      out.problems.push_back(fmt::format("{} does not exist", rung.plugin_library));
    } else {
      present.push_back(path_from_utf8(rung.plugin_library));
    }
  }
  for (const auto& name : rung.provider_libraries) {
    out.files.push_back(name);
    std::error_code ec;
    if (const fs::path file = dir / path_from_utf8(name); fs::exists(file, ec)) {
      present.push_back(file);
    } else if (out.problems.empty()) {
      // The provider's own file first: when it is absent, the bridge's absence is no news.
      out.problems.push_back(fmt::format("{} ({}) is not beside {}", identify_library(name).what, name, core));
    }
  }
  out.certain_to_fail = !out.problems.empty();
  if (out.certain_to_fail) return out;

  // In the process that loads a provider the core is loaded, with everything it
  // needs, and ONNX Runtime has loaded the provider bridge from the runtime directory.
  std::vector<LoadedObject> loaded{{core, build.library}};
  if (auto elf = read_elf_dynamic(build.library); elf && !elf->soname.empty()) loaded.push_back({elf->soname, build.library});
  if (auto core_needs = resolve_dependencies(build.library, paths)) {
    for (const auto& lib : *core_needs) loaded.push_back({lib.name, lib.path});  // loaded, even where this search cannot say from where
  }
  const std::string bridge = library_file_name(std::string(kProviderStem) + "shared");
  if (std::error_code ec; fs::exists(dir / path_from_utf8(bridge), ec)) loaded.push_back({bridge, dir / path_from_utf8(bridge)});
  std::set<std::string> own_files;
  for (const auto& f : present) own_files.insert(f.filename().string());
  for (const auto& f : present) {
    auto resolved = resolve_dependencies(f, paths, loaded);
    if (!resolved) {
      out.problems.push_back(resolved.error().message);
      out.certain_to_fail = true;
      continue;
    }
    describe(*resolved, own_files, {f.parent_path(), dir}, out.problems);
    for (auto& lib : *resolved) {
      // A library two of the rung's files need is listed once.
      bool listed = std::any_of(out.libraries.begin(), out.libraries.end(), [&](const ResolvedLibrary& l) { return l.name == lib.name; });
      if (!listed) out.libraries.push_back(std::move(lib));
    }
  }

  if (!present.empty() && library_stem(present.front().filename().string()).rfind(kProviderStem, 0) == 0) {
    out.provider_version = provider_onnxruntime_version(present.front(), build.version);
    if (!out.provider_version.empty() && out.provider_version != build.version) {
      out.problems.push_back(fmt::format("provider from ONNX Runtime {} beside the {} core", out.provider_version, build.version));
      out.certain_to_fail = true;
    }
  }
  return out;
}

}  // namespace rung
