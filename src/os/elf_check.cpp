#include "os/elf_check.h"

#include <elf.h>
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace rung {

std::string elf_truncation_problem(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot be read";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return {};  // too short to be ELF: dlopen says why
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return {};  // dlopen says why
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return "malformed ELF program header size";
  const std::uint64_t ph_end = eh.e_phoff + std::uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr);
  if (ph_end > size) return fmt::format("truncated ELF: program headers end at byte {} but the file has {}", ph_end, size);
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  in.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr)));
  for (const auto& p : ph) {
    if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
    if (p.p_offset + p.p_filesz > size) {
      return fmt::format("truncated ELF: a segment ends at byte {} but the file has {}", p.p_offset + p.p_filesz, size);
    }
  }
  return {};
}

}  // namespace rung
