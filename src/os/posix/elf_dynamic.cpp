#include "os/elf_dynamic.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>

namespace rung {
namespace fs = std::filesystem;
namespace {

// Bounds on the chains a malformed file could make endless.
constexpr std::size_t kMaxChain = 1 << 16;

// The file mapped read-only; every read is bounds-checked, so a truncated or
// hostile file yields "not understood", never a fault.
class MappedFile {
 public:
  explicit MappedFile(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return data_ != nullptr; }
  std::size_t size() const { return size_; }

  template <class T>
  std::optional<T> read(std::uint64_t offset) const {
    if (offset > size_ || size_ - offset < sizeof(T)) return std::nullopt;
    T out;
    std::memcpy(&out, data_ + offset, sizeof(T));
    return out;
  }
  // The NUL-terminated string at `offset`, not past `limit`; nullopt when it runs off.
  std::optional<std::string> c_string(std::uint64_t offset, std::uint64_t limit) const {
    limit = std::min<std::uint64_t>(limit, size_);
    if (offset >= limit) return std::nullopt;
    const void* nul = std::memchr(data_ + offset, '\0', limit - offset);
    if (nul == nullptr) return std::nullopt;
    return std::string(data_ + offset, static_cast<const char*>(nul));
  }
  std::string_view range(std::uint64_t offset, std::uint64_t length) const {
    if (offset > size_ || size_ - offset < length) return {};
    return {data_ + offset, length};
  }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Image {
  Elf64_Ehdr header{};
  std::vector<Elf64_Phdr> segments;

  // A virtual address in a loaded segment, as a file offset.
  std::optional<std::uint64_t> offset_of(std::uint64_t vaddr) const {
    for (const auto& p : segments) {
      if (p.p_type == PT_LOAD && vaddr >= p.p_vaddr && vaddr - p.p_vaddr < p.p_filesz) return p.p_offset + (vaddr - p.p_vaddr);
    }
    return std::nullopt;
  }
};

// The 64-bit little-endian header and program headers, or why not.
Result<Image> read_image(const MappedFile& f, const fs::path& file, ElfDynamic* identity) {
  auto ident = f.range(0, EI_NIDENT);
  if (ident.size() != EI_NIDENT || std::memcmp(ident.data(), ELFMAG, SELFMAG) != 0) {
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: not an ELF file", file.string())};
  }
  if (ident[EI_DATA] != ELFDATA2LSB) return Error{ErrorCode::kUnsupported, fmt::format("{}: a big-endian ELF file", file.string())};
  if (identity != nullptr) {
    identity->elf_class = ident[EI_CLASS];
    identity->machine = f.read<std::uint16_t>(offsetof(Elf64_Ehdr, e_machine)).value_or(0);  // same offset in ELF32
  }
  if (ident[EI_CLASS] != ELFCLASS64) return Error{ErrorCode::kUnsupported, fmt::format("{}: a 32-bit ELF file", file.string())};
  Image image;
  image.header = *f.read<Elf64_Ehdr>(0);
  if (image.header.e_phentsize != sizeof(Elf64_Phdr)) {
    return Error{ErrorCode::kLoadFailed, fmt::format("{}: malformed ELF program headers", file.string())};
  }
  for (std::uint16_t i = 0; i < image.header.e_phnum; ++i) {
    auto p = f.read<Elf64_Phdr>(image.header.e_phoff + std::uint64_t{i} * sizeof(Elf64_Phdr));
    if (!p) return Error{ErrorCode::kLoadFailed, fmt::format("{}: truncated ELF program headers", file.string())};
    image.segments.push_back(*p);
  }
  return image;
}

struct DynamicTable {
  std::vector<Elf64_Dyn> entries;
  std::uint64_t strtab = 0, strsz = 0;  // file offset and size of the dynamic string table

  std::optional<std::uint64_t> value(Elf64_Sxword tag) const {
    for (const auto& d : entries) {
      if (d.d_tag == tag) return d.d_un.d_val;
    }
    return std::nullopt;
  }
};

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void read_version_needs(const MappedFile& f, const Image& image, const DynamicTable& dyn, ElfDynamic& out) {
  auto at = dyn.value(DT_VERNEED);
  auto count = dyn.value(DT_VERNEEDNUM);
  if (!at || !count) return;
  auto offset = image.offset_of(*at);
  for (std::uint64_t i = 0; offset && i < *count && i < kMaxChain; ++i) {
    auto need = f.read<Elf64_Verneed>(*offset);
    if (!need) return;
    VersionNeed v;
    v.file = f.c_string(dyn.strtab + need->vn_file, dyn.strtab + dyn.strsz).value_or("");
    std::uint64_t aux_at = *offset + need->vn_aux;
    for (std::uint16_t k = 0; k < need->vn_cnt && k < kMaxChain; ++k) {
      auto aux = f.read<Elf64_Vernaux>(aux_at);
      if (!aux) break;
      if ((aux->vna_flags & VER_FLG_WEAK) == 0) {
        if (auto name = f.c_string(dyn.strtab + aux->vna_name, dyn.strtab + dyn.strsz)) v.versions.push_back(*name);
      }
      if (aux->vna_next == 0) break;
      aux_at += aux->vna_next;
    }
    out.version_needs.push_back(std::move(v));
    if (need->vn_next == 0) break;
    *offset += need->vn_next;
  }
}

void read_version_definitions(const MappedFile& f, const Image& image, const DynamicTable& dyn, ElfDynamic& out) {
  auto at = dyn.value(DT_VERDEF);
  auto count = dyn.value(DT_VERDEFNUM);
  if (!at || !count) return;
  auto offset = image.offset_of(*at);
  for (std::uint64_t i = 0; offset && i < *count && i < kMaxChain; ++i) {
    auto def = f.read<Elf64_Verdef>(*offset);
    if (!def) return;
    if (def->vd_cnt > 0) {
      if (auto aux = f.read<Elf64_Verdaux>(*offset + def->vd_aux)) {
        if (auto name = f.c_string(dyn.strtab + aux->vda_name, dyn.strtab + dyn.strsz)) out.version_definitions.push_back(*name);
      }
    }
    if (def->vd_next == 0) break;
    *offset += def->vd_next;
  }
}

// The section headers and their names, when the file has them.
struct Section {
  std::string name;
  Elf64_Shdr header{};
};

std::vector<Section> read_sections(const MappedFile& f, const Elf64_Ehdr& eh) {
  std::vector<Section> out;
  if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) return out;
  auto names = f.read<Elf64_Shdr>(eh.e_shoff + std::uint64_t{eh.e_shstrndx} * sizeof(Elf64_Shdr));
  if (!names) return out;
  for (std::uint16_t i = 0; i < eh.e_shnum; ++i) {
    auto sh = f.read<Elf64_Shdr>(eh.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr));
    if (!sh) return {};
    auto name = f.c_string(names->sh_offset + sh->sh_name, names->sh_offset + names->sh_size).value_or("");
    out.push_back({std::move(name), *sh});
  }
  return out;
}

}  // namespace

Result<ElfDynamic> read_elf_dynamic(const fs::path& file) {
  MappedFile f(file);
  if (!f.ok()) return Error{ErrorCode::kIo, fmt::format("{}: cannot be read", file.string())};
  ElfDynamic out;
  auto image = read_image(f, file, &out);
  if (!image) {
    if (out.elf_class != 0) return out;  // another class: its identity is the answer
    return image.error();
  }
  DynamicTable dyn;
  for (const auto& p : image->segments) {
    if (p.p_type != PT_DYNAMIC) continue;
    for (std::uint64_t at = p.p_offset; at + sizeof(Elf64_Dyn) <= p.p_offset + p.p_filesz; at += sizeof(Elf64_Dyn)) {
      auto d = f.read<Elf64_Dyn>(at);
      if (!d || d->d_tag == DT_NULL) break;
      dyn.entries.push_back(*d);
    }
  }
  if (dyn.entries.empty()) return out;  // statically linked: needs nothing
  auto strtab = dyn.value(DT_STRTAB);
  auto strtab_offset = strtab ? image->offset_of(*strtab) : std::nullopt;
  if (!strtab_offset) return Error{ErrorCode::kLoadFailed, fmt::format("{}: its dynamic string table is not in the file", file.string())};
  dyn.strtab = *strtab_offset;
  dyn.strsz = dyn.value(DT_STRSZ).value_or(f.size() - dyn.strtab);
  auto string_at = [&](std::uint64_t offset) { return f.c_string(dyn.strtab + offset, dyn.strtab + dyn.strsz).value_or(""); };
  for (const auto& d : dyn.entries) {
    switch (d.d_tag) {
      case DT_NEEDED: out.needed.push_back(string_at(d.d_un.d_val)); break;
      case DT_SONAME: out.soname = string_at(d.d_un.d_val); break;
      case DT_RUNPATH: out.runpath = split_path_list(string_at(d.d_un.d_val)); break;
      case DT_RPATH: out.rpath = split_path_list(string_at(d.d_un.d_val)); break;
      case DT_FLAGS_1: out.nodeflib = (d.d_un.d_val & DF_1_NODEFLIB) != 0; break;
      default: break;
    }
  }
  read_version_needs(f, *image, dyn, out);
  read_version_definitions(f, *image, dyn, out);
  return out;
}

bool elf_exports_symbol(const fs::path& file, std::string_view symbol) {
  MappedFile f(file);
  if (!f.ok()) return false;
  auto image = read_image(f, file, nullptr);
  if (!image) return false;
  auto sections = read_sections(f, image->header);
  for (const auto& s : sections) {
    if (s.header.sh_type != SHT_DYNSYM || s.header.sh_entsize != sizeof(Elf64_Sym) || s.header.sh_link >= sections.size()) continue;
    const auto& names = sections[s.header.sh_link].header;
    for (std::uint64_t at = s.header.sh_offset; at + sizeof(Elf64_Sym) <= s.header.sh_offset + s.header.sh_size; at += sizeof(Elf64_Sym)) {
      auto sym = f.read<Elf64_Sym>(at);
      if (!sym) break;
      int binding = ELF64_ST_BIND(sym->st_info);
      bool exported = sym->st_shndx != SHN_UNDEF && (binding == STB_GLOBAL || binding == STB_WEAK) &&
                      ELF64_ST_VISIBILITY(sym->st_other) == STV_DEFAULT;
      if (exported && f.c_string(names.sh_offset + sym->st_name, names.sh_offset + names.sh_size) == symbol) return true;
    }
  }
  return false;
}

std::vector<std::string> elf_section_strings(const fs::path& file, std::string_view section,
                                             const std::function<bool(std::string_view)>& keep) {
  std::vector<std::string> out;
  MappedFile f(file);
  if (!f.ok()) return out;
  auto image = read_image(f, file, nullptr);
  if (!image) return out;
  for (const auto& s : read_sections(f, image->header)) {
    if (s.name != section || s.header.sh_type == SHT_NOBITS) continue;
    std::string_view bytes = f.range(s.header.sh_offset, s.header.sh_size);
    while (!bytes.empty()) {
      auto nul = bytes.find('\0');
      std::string_view one = bytes.substr(0, nul);
      if (!one.empty() && keep(one)) out.emplace_back(one);
      if (nul == std::string_view::npos) break;
      bytes.remove_prefix(nul + 1);
    }
  }
  return out;
}

}  // namespace rung
