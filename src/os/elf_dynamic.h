// A shared object's dynamic section, read from the file without loading it:
// what the dynamic loader would read to find its dependencies.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rung/result.h"

namespace rung {

// Symbol versions an object needs from one of its dependencies (DT_VERNEED).
struct VersionNeed {
  std::string file;                   // "libstdc++.so.6"
  std::vector<std::string> versions;  // "GLIBCXX_3.4.30"; weak ones left out (their absence is no error)
};

struct ElfDynamic {
  int elf_class = 0;                  // ELFCLASS64, ELFCLASS32
  int machine = 0;                    // EM_X86_64, EM_AARCH64, ...
  std::string soname;
  std::vector<std::string> needed;    // DT_NEEDED, in the file's order (the loader's order)
  std::vector<std::string> runpath;   // DT_RUNPATH entries, $ORIGIN unexpanded
  std::vector<std::string> rpath;     // DT_RPATH entries (ignored by the loader when DT_RUNPATH is there)
  bool nodeflib = false;              // DF_1_NODEFLIB: neither ld.so.cache nor the default directories
  std::vector<VersionNeed> version_needs;
  std::vector<std::string> version_definitions;  // DT_VERDEF names
};

// Reads the dynamic section through the program headers, as the loader does.
// An Error when the file is not an ELF shared object this reader understands
// (a 32-bit object yields its class and machine and nothing else).
Result<ElfDynamic> read_elf_dynamic(const std::filesystem::path& file);

// Whether the object defines and exports `symbol` in its dynamic symbol table.
bool elf_exports_symbol(const std::filesystem::path& file, std::string_view symbol);

// Every NUL-terminated string in the named section ("".rodata") for which `keep`
// says yes; empty when the file has no such section.
std::vector<std::string> elf_section_strings(const std::filesystem::path& file, std::string_view section,
                                             const std::function<bool(std::string_view)>& keep);

}  // namespace rung
