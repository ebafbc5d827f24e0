#include "os/library_files.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <vector>

#include "os/elf_dynamic.h"
#include "os/machine.h"

namespace rung {
namespace {

constexpr std::string_view kPrefix = "lib";
constexpr std::string_view kSuffix = ".so";

// ".so", or ".so" then dot-separated digits (".so.1", ".so.1.30.0").
bool is_suffix(std::string_view rest) {
  if (rest.substr(0, kSuffix.size()) != kSuffix) return false;
  rest.remove_prefix(kSuffix.size());
  if (rest.empty()) return true;
  if (rest.front() != '.' || rest.back() == '.') return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); }) &&
         rest.find("..") == std::string_view::npos;
}

// The offset of the suffix, or npos when the name is no library's.
std::size_t suffix_at(std::string_view name) {
  for (std::size_t at = name.find(kSuffix); at != std::string_view::npos; at = name.find(kSuffix, at + 1)) {
    if (at > 0 && is_suffix(name.substr(at))) return at;
  }
  return std::string_view::npos;
}

// This build's ELF machine, and the name the kernel gives it.
struct Machine {
  int elf;
  const char* name;
};
constexpr Machine kMachines[] = {{EM_X86_64, "x86_64"}, {EM_AARCH64, "aarch64"}, {EM_386, "i386"}, {EM_ARM, "arm"},
                                 {EM_RISCV, "riscv64"}, {EM_PPC64, "ppc64"}, {EM_S390, "s390x"}};
#if defined(__x86_64__)
constexpr int kThisMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kThisMachine = EM_AARCH64;
#else
constexpr int kThisMachine = 0;  // not checked
#endif

std::string machine_name(int elf) {
  for (const auto& m : kMachines) {
    if (m.elf == elf) return m.name;
  }
  return fmt::format("ELF machine {}", elf);
}

}  // namespace

std::string program_file_name(std::string_view name) { return std::string(name); }

std::string library_file_name(std::string_view stem) { return fmt::format("{}{}{}", kPrefix, stem, kSuffix); }

bool is_library_file_name(std::string_view file_name) { return suffix_at(file_name) != std::string_view::npos; }

bool is_library_file_of(std::string_view file_name, std::string_view stem) {
  const std::size_t head = kPrefix.size() + stem.size();
  return file_name.size() >= head && file_name.substr(0, kPrefix.size()) == kPrefix && file_name.substr(kPrefix.size(), stem.size()) == stem &&
         is_suffix(file_name.substr(head));
}

std::string library_stem(std::string_view file_name) {
  const std::size_t at = suffix_at(file_name);
  if (at == std::string_view::npos) return std::string(file_name);
  std::string_view stem = file_name.substr(0, at);
  if (stem.substr(0, kPrefix.size()) == kPrefix && stem.size() > kPrefix.size()) stem.remove_prefix(kPrefix.size());
  return std::string(stem);
}

std::optional<LibraryFileName> split_library_file_name(std::string_view file_name) {
  const std::size_t at = suffix_at(file_name);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view version = file_name.substr(at + kSuffix.size());
  if (!version.empty()) version.remove_prefix(1);  // the dot
  return LibraryFileName{file_name.substr(0, at), version};
}

std::string library_file_problem(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot be read";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return {};                          // too short to be ELF: the loader says why
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return {};  // the loader says why
  if (kThisMachine != 0 && eh.e_machine != kThisMachine) {
    return fmt::format("built for {}, not for this machine ({})", machine_name(eh.e_machine), machine_architecture());
  }
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

bool library_exports_symbol(const std::filesystem::path& file, std::string_view symbol) { return elf_exports_symbol(file, symbol); }

}  // namespace rung
