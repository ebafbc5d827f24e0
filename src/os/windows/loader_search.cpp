// Windows: the dependency diagnosis (which libraries a provider pulls in, where
// the loader would find each) reads ELF and models Linux's loader; it is not
// ported. A provider that cannot load is told by the loader's own error
// (os/windows/dynamic_library.cpp), and nothing is resolved ahead of it here.
#include "os/elf_dynamic.h"
#include "os/loader_search.h"

namespace rung {

LoaderPaths LoaderPaths::of_this_process() { return {}; }

Result<std::vector<std::pair<std::string, std::filesystem::path>>> read_ld_cache(const std::filesystem::path& file) {
  return Error{ErrorCode::kUnsupported, file.string() + ": ld.so.cache is Linux's"};
}

std::vector<LoadedObject> objects_loaded_in_this_process() { return {}; }

Result<std::vector<ResolvedLibrary>> resolve_dependencies(const std::filesystem::path&, const LoaderPaths&, const std::vector<LoadedObject>&) {
  return std::vector<ResolvedLibrary>{};
}

Result<ElfDynamic> read_elf_dynamic(const std::filesystem::path& file) {
  return Error{ErrorCode::kUnsupported, file.string() + ": a PE file; its dependencies are not read on Windows yet"};
}

bool elf_exports_symbol(const std::filesystem::path&, std::string_view) { return false; }

std::vector<std::string> elf_section_strings(const std::filesystem::path&, std::string_view, const std::function<bool(std::string_view)>&) {
  return {};
}

}  // namespace rung
