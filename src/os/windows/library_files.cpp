// Windows: libraries are "<stem>.dll" in the Portable Executable format. The
// headers are read as bytes (no <windows.h>), so what a file claims is checked
// before the loader maps a byte of it.
#include "os/library_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <vector>

namespace rung {
namespace {

constexpr std::string_view kSuffix = ".dll";

bool ends_with_suffix(std::string_view name) {
  if (name.size() <= kSuffix.size()) return false;
  std::string_view tail = name.substr(name.size() - kSuffix.size());
  return std::equal(tail.begin(), tail.end(), kSuffix.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });  // file names ignore case here
}

constexpr std::uint16_t kMachineAmd64 = 0x8664;
constexpr std::uint16_t kMachineArm64 = 0xAA64;
#if defined(__x86_64__) || defined(_M_X64)
constexpr std::uint16_t kThisMachine = kMachineAmd64;
constexpr const char* kThisMachineName = "x86_64";
#elif defined(__aarch64__) || defined(_M_ARM64)
constexpr std::uint16_t kThisMachine = kMachineArm64;
constexpr const char* kThisMachineName = "aarch64";
#else
constexpr std::uint16_t kThisMachine = 0;  // not checked
constexpr const char* kThisMachineName = "unknown";
#endif

std::string machine_name(std::uint16_t m) {
  switch (m) {
    case kMachineAmd64: return "x86_64";
    case kMachineArm64: return "aarch64";
    case 0x014c: return "i386";
    case 0x01c4: return "arm";
    case 0xA641: return "arm64ec";
    default: return fmt::format("PE machine 0x{:04x}", m);
  }
}

// Little-endian fields read at offsets of a file that may lie about its sizes.
class PeFile {
 public:
  explicit PeFile(const std::filesystem::path& file) : in_(file, std::ios::binary) {
    if (in_) {
      in_.seekg(0, std::ios::end);
      size_ = static_cast<std::uint64_t>(in_.tellg());
    }
  }
  bool readable() const { return static_cast<bool>(in_); }
  std::uint64_t size() const { return size_; }
  bool bytes(std::uint64_t at, void* out, std::size_t n) {
    if (at > size_ || n > size_ - at) return false;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(at));
    return static_cast<bool>(in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n)));
  }
  bool u16(std::uint64_t at, std::uint16_t& v) {
    unsigned char b[2];
    if (!bytes(at, b, 2)) return false;
    v = static_cast<std::uint16_t>(b[0] | b[1] << 8);
    return true;
  }
  bool u32(std::uint64_t at, std::uint32_t& v) {
    unsigned char b[4];
    if (!bytes(at, b, 4)) return false;
    v = static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 | static_cast<std::uint32_t>(b[2]) << 16 |
        static_cast<std::uint32_t>(b[3]) << 24;
    return true;
  }

 private:
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

struct Section {
  std::uint32_t virtual_address = 0, virtual_size = 0, raw_size = 0, raw_offset = 0;
};

// What the headers say, or why they cannot be believed. `pe` is false for a
// file that is not PE at all (left to the loader to name).
struct PeHeaders {
  bool pe = false;
  std::string problem;
  std::uint16_t machine = 0;
  std::uint16_t characteristics = 0;
  std::uint32_t export_rva = 0, export_size = 0;
  std::vector<Section> sections;
};

PeHeaders read_headers(PeFile& f) {
  PeHeaders h;
  char mz[2];
  std::uint32_t pe_at = 0;
  if (!f.bytes(0, mz, 2) || mz[0] != 'M' || mz[1] != 'Z' || !f.u32(0x3C, pe_at)) return h;
  char sig[4];
  if (!f.bytes(pe_at, sig, 4) || sig[0] != 'P' || sig[1] != 'E' || sig[2] != 0 || sig[3] != 0) return h;
  h.pe = true;
  const std::uint64_t coff = std::uint64_t{pe_at} + 4;
  std::uint16_t sections = 0, optional_size = 0, magic = 0;
  if (!f.u16(coff, h.machine) || !f.u16(coff + 2, sections) || !f.u16(coff + 16, optional_size) || !f.u16(coff + 18, h.characteristics)) {
    h.problem = "truncated PE: the file ends inside its headers";
    return h;
  }
  const std::uint64_t optional = coff + 20;
  if (optional_size > 0 && !f.u16(optional, magic)) {
    h.problem = "truncated PE: the file ends inside its optional header";
    return h;
  }
  // PE32+ (0x20b) keeps its data directories at 112, PE32 (0x10b) at 96; the export table is the first.
  const std::uint64_t directories = magic == 0x20b ? 112 : 96;
  std::uint32_t count = 0;
  if (optional_size >= directories && f.u32(optional + directories - 4, count) && count > 0 && optional_size >= directories + 8) {
    f.u32(optional + directories, h.export_rva);
    f.u32(optional + directories + 4, h.export_size);
  }
  const std::uint64_t table = optional + optional_size;
  if (table + std::uint64_t{sections} * 40 > f.size()) {
    h.problem = fmt::format("truncated PE: the section table ends at byte {} but the file has {}", table + std::uint64_t{sections} * 40, f.size());
    return h;
  }
  for (std::uint16_t i = 0; i < sections; ++i) {
    Section s;
    const std::uint64_t at = table + std::uint64_t{i} * 40;
    f.u32(at + 8, s.virtual_size);
    f.u32(at + 12, s.virtual_address);
    f.u32(at + 16, s.raw_size);
    f.u32(at + 20, s.raw_offset);
    if (s.raw_size > 0 && std::uint64_t{s.raw_offset} + s.raw_size > f.size()) {
      h.problem = fmt::format("truncated PE: a section ends at byte {} but the file has {}", std::uint64_t{s.raw_offset} + s.raw_size, f.size());
      return h;
    }
    h.sections.push_back(s);
  }
  return h;
}

// The file offset of a virtual address, through the section that holds it.
bool offset_of(const PeHeaders& h, std::uint32_t rva, std::uint64_t& at) {
  for (const auto& s : h.sections) {
    const std::uint32_t span = std::max(s.virtual_size, s.raw_size);
    if (rva >= s.virtual_address && rva - s.virtual_address < span && rva - s.virtual_address < s.raw_size) {
      at = std::uint64_t{s.raw_offset} + (rva - s.virtual_address);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string program_file_name(std::string_view name) { return fmt::format("{}.exe", name); }

std::string library_file_name(std::string_view stem) { return fmt::format("{}{}", stem, kSuffix); }

bool is_library_file_name(std::string_view file_name) { return ends_with_suffix(file_name); }

bool is_library_file_of(std::string_view file_name, std::string_view stem) {
  return ends_with_suffix(file_name) && file_name.size() == stem.size() + kSuffix.size() && file_name.substr(0, stem.size()) == stem;
}

std::string library_stem(std::string_view file_name) {
  if (!ends_with_suffix(file_name)) return std::string(file_name);
  return std::string(file_name.substr(0, file_name.size() - kSuffix.size()));
}

std::optional<LibraryFileName> split_library_file_name(std::string_view file_name) {
  if (!ends_with_suffix(file_name)) return std::nullopt;
  return LibraryFileName{file_name.substr(0, file_name.size() - kSuffix.size()), {}};  // a DLL's version is in its name or resources
}

std::string library_file_problem(const std::filesystem::path& file) {
  PeFile f(file);
  if (!f.readable()) return "cannot be read";
  PeHeaders h = read_headers(f);
  if (!h.pe) return {};  // not PE: the loader says why
  if (!h.problem.empty()) return h.problem;
  if (kThisMachine != 0 && h.machine != kThisMachine) {
    return fmt::format("built for {}, not for this machine ({})", machine_name(h.machine), kThisMachineName);
  }
  if ((h.characteristics & 0x2000) == 0) return "a program, not a DLL";  // IMAGE_FILE_DLL
  return {};
}

bool library_exports_symbol(const std::filesystem::path& file, std::string_view symbol) {
  PeFile f(file);
  if (!f.readable()) return false;
  PeHeaders h = read_headers(f);
  std::uint64_t dir = 0;
  if (!h.pe || !h.problem.empty() || h.export_rva == 0 || !offset_of(h, h.export_rva, dir)) return false;
  std::uint32_t names = 0, names_rva = 0;
  if (!f.u32(dir + 24, names) || !f.u32(dir + 32, names_rva)) return false;
  std::uint64_t table = 0;
  if (!offset_of(h, names_rva, table)) return false;
  std::vector<char> name(symbol.size() + 1);
  for (std::uint32_t i = 0; i < names; ++i) {
    std::uint32_t rva = 0;
    std::uint64_t at = 0;
    if (!f.u32(table + std::uint64_t{i} * 4, rva)) return false;
    if (!offset_of(h, rva, at) || !f.bytes(at, name.data(), name.size())) continue;
    if (std::string_view(name.data(), symbol.size()) == symbol && name.back() == '\0') return true;
  }
  return false;
}

}  // namespace rung
