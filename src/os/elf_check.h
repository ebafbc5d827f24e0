// A look at a shared object's ELF headers before dlopen touches it. dlopen maps
// segments by the sizes the headers claim; a truncated file then faults with
// SIGBUS inside the loader instead of returning an error.
#pragma once

#include <filesystem>
#include <string>

namespace rung {

// Empty when the file's headers and loadable segments fit inside it; otherwise the reason.
std::string elf_truncation_problem(const std::filesystem::path& file);

}  // namespace rung
