// Hardware detection from sysfs, procfs and /dev under a root directory.
// Every read is best-effort: a missing or unreadable file is an absent fact.
#include "rung/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "os/read_file.h"

namespace rung {

namespace fs = std::filesystem;

namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

// The whole file as text, or nullopt when it is missing, not a regular file, or
// unreadable: os's reader for the kernel's pseudo-files (read to their end, bounded).
std::optional<std::string> read_file(const fs::path& p) { return read_system_file(p); }

std::optional<std::string> read_trimmed(const fs::path& p) {
  auto text = read_file(p);
  if (!text) return std::nullopt;
  return std::string(trim(*text));
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !ec;
}

// "0x030000", "0x10de", "10de" -> value; nullopt for anything that is not 1..8 hex digits.
std::optional<std::uint32_t> parse_hex(std::string_view s) {
  s = trim(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  std::uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::uint16_t> parse_hex16(std::string_view s) {
  auto v = parse_hex(s);
  if (!v || *v > 0xffffu) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

std::optional<std::uint32_t> read_hex(const fs::path& p) {
  auto text = read_file(p);
  if (!text) return std::nullopt;
  return parse_hex(*text);
}

std::optional<std::uint16_t> read_hex16(const fs::path& p) {
  auto text = read_file(p);
  if (!text) return std::nullopt;
  return parse_hex16(*text);
}

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Lines of a text, without the trailing newline (and carriage return).
std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    auto nl = s.find('\n');
    auto line = s.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return out;
}

// Names of the entries of a directory; nullopt when it cannot be listed.
std::optional<std::vector<std::string>> list_dir(const fs::path& dir, bool skip_directories = false) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return std::nullopt;
  std::vector<std::string> names;
  for (const fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (skip_directories) {
      std::error_code dec;
      if (it->is_directory(dec)) continue;
    }
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

Vendor vendor_from_pci_id(std::uint16_t id) {
  switch (id) {
    case 0x10de: return Vendor::kNvidia;
    case 0x1002: return Vendor::kAmd;
    case 0x8086: return Vendor::kIntel;
    case 0x5143:
    case 0x17cb: return Vendor::kQualcomm;
    case 0x106b: return Vendor::kApple;
    default: return Vendor::kUnknown;
  }
}

void read_pci(const fs::path& root, Hardware& hw) {
  const fs::path devices = root / "sys/bus/pci/devices";
  auto names = list_dir(devices);
  if (!names) return;
  hw.pci_visible = true;
  for (const auto& address : *names) {  // sorted by address already
    const fs::path dev = devices / address;
    auto class_code = read_hex(dev / "class");
    if (!class_code) continue;
    const auto base_class = (*class_code >> 16) & 0xffu;
    if (base_class != 0x03u && base_class != 0x12u) continue;
    auto vendor_id = read_hex16(dev / "vendor");
    auto device_id = read_hex16(dev / "device");
    if (!vendor_id || !device_id) continue;
    PciDevice d;
    d.address = address;
    d.class_code = *class_code;
    d.vendor_id = *vendor_id;
    d.device_id = *device_id;
    d.vendor = vendor_from_pci_id(*vendor_id);
    hw.gpus.push_back(std::move(d));
  }
}

// "550.54.14", "535.104.05": digits and dots, starting with a digit, with at least one dot.
bool looks_like_version(std::string_view t) {
  if (t.empty() || t.front() < '0' || t.front() > '9' || t.back() == '.') return false;
  bool dot = false;
  for (char c : t) {
    if (c == '.') dot = true;
    else if (c < '0' || c > '9') return false;
  }
  return dot;
}

// NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024
// NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build  (...)  Sat Aug 19 ...
std::optional<std::string> parse_nvidia_version(std::string_view text) {
  for (auto line : split_lines(text)) {
    line = trim(line);
    if (!starts_with(line, "NVRM version:")) continue;
    auto after = line;
    if (auto km = line.find("Kernel Module"); km != std::string_view::npos) after = line.substr(km);
    for (const auto& tok : split_ws(after))
      if (looks_like_version(tok)) return tok;
    for (const auto& tok : split_ws(line))
      if (looks_like_version(tok)) return tok;
  }
  return std::nullopt;
}

void read_dev(const fs::path& root, Hardware& hw) {
  if (auto names = list_dir(root / "dev", /*skip_directories=*/true)) {
    for (const auto& n : *names)
      if (starts_with(n, "nvidia")) hw.nvidia_device_nodes.push_back("/dev/" + n);
  }
  hw.rocm_kfd = path_exists(root / "dev/kfd");
  if (auto names = list_dir(root / "dev/dri")) {
    for (const auto& n : *names)
      if (starts_with(n, "renderD")) hw.dri_render_nodes.push_back("/dev/dri/" + n);
  }
  hw.hexagon_dsp = path_exists(root / "dev/fastrpc-cdsp") || path_exists(root / "dev/adsprpc-smd");
}

CpuInfo parse_cpuinfo(std::string_view text) {
  CpuInfo cpu;
  std::string hardware, board, implementer, part;
  bool have_flags = false;
  std::set<std::pair<std::string, std::string>> cores;
  std::optional<std::string> physical_id, core_id;
  auto end_block = [&] {
    if (physical_id && core_id) cores.emplace(*physical_id, *core_id);
    physical_id.reset();
    core_id.reset();
  };
  for (auto line : split_lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      if (trim(line).empty()) end_block();
      continue;
    }
    const auto key = trim(line.substr(0, colon));
    const auto value = trim(line.substr(colon + 1));
    if (key == "processor") {
      end_block();
      ++cpu.logical_cpus;
    } else if (key == "model name") {
      if (cpu.model.empty()) cpu.model = value;
    } else if (key == "flags" || key == "Features") {
      if (!have_flags) {
        cpu.flags = split_ws(value);
        have_flags = true;
      }
    } else if (key == "physical id") {
      physical_id = std::string(value);
    } else if (key == "core id") {
      core_id = std::string(value);
    } else if (key == "Hardware") {
      if (hardware.empty()) hardware = value;
    } else if (key == "Model") {  // a Raspberry Pi's kernel names the board: "Raspberry Pi 4 Model B Rev 1.4"
      if (board.empty()) board = value;
    } else if (key == "CPU implementer") {
      if (implementer.empty()) implementer = value;
    } else if (key == "CPU part") {
      if (part.empty()) part = value;
    }
  }
  end_block();
  if (cpu.model.empty()) {
    if (!board.empty()) cpu.model = board;
    else if (!hardware.empty()) cpu.model = hardware;
    else if (!implementer.empty() || !part.empty())
      cpu.model = fmt::format("ARM implementer {} part {}", implementer.empty() ? "?" : implementer,
                              part.empty() ? "?" : part);
  }
  cpu.physical_cores = cores.empty() ? cpu.logical_cpus : static_cast<int>(cores.size());
  return cpu;
}

std::optional<SocInfo> read_soc(const fs::path& root) {
  const fs::path dir = root / "sys/devices/soc0";
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || ec) return std::nullopt;
  SocInfo soc;
  soc.vendor = read_trimmed(dir / "vendor").value_or("");
  soc.family = read_trimmed(dir / "family").value_or("");
  soc.machine = read_trimmed(dir / "machine").value_or("");
  soc.soc_id = read_trimmed(dir / "soc_id").value_or("");
  if (soc.vendor.empty() && soc.family.find("Snapdragon") != std::string::npos) soc.vendor = "Qualcomm";
  return soc;
}

OsKind detect_os(const fs::path& root) {
  if (path_exists(root / "system/build.prop")) return OsKind::kAndroid;
#if defined(__APPLE__)
  if (root == fs::path("/")) return OsKind::kMacos;
#elif defined(_WIN32)
  if (root == fs::path("/")) return OsKind::kWindows;
#endif
  return OsKind::kLinux;
}

}  // namespace

const char* vendor_name(Vendor v) {
  switch (v) {
    case Vendor::kNvidia: return "NVIDIA";
    case Vendor::kAmd: return "AMD";
    case Vendor::kIntel: return "Intel";
    case Vendor::kQualcomm: return "Qualcomm";
    case Vendor::kApple: return "Apple";
    case Vendor::kUnknown: break;
  }
  return "unknown";
}

const char* os_name(OsKind os) {
  switch (os) {
    case OsKind::kLinux: return "linux";
    case OsKind::kAndroid: return "android";
    case OsKind::kMacos: return "macos";
    case OsKind::kWindows: return "windows";
  }
  return "linux";
}

std::vector<QuantisedSpeedFeature> quantised_speed_features(const CpuInfo& cpu) {
  if (cpu.flags.empty()) return {};
  // ARM's /proc/cpuinfo says "Features: fp asimd ..."; x86's "flags: fpu ... sse2 ...".
  const bool arm = cpu.has_flag("asimd") || (cpu.has_flag("fp") && !cpu.has_flag("sse2"));
  if (arm) {
    return {{"dotprod", "dot-product", cpu.has_flag("asimddp")}, {"i8mm", "i8mm", cpu.has_flag("i8mm")}};
  }
  return {{"avx2", "AVX2", cpu.has_flag("avx2")},
          {"avx512", "AVX-512", cpu.has_flag("avx512f")},
          {"vnni", "VNNI", cpu.has_flag("avx512_vnni") || cpu.has_flag("avx_vnni")},
          {"amx", "AMX", cpu.has_flag("amx_int8")}};
}

std::string quantised_speed_line(const std::vector<QuantisedSpeedFeature>& features) {
  if (features.empty()) return "unknown (no CPU flags read)";
  std::string out;
  for (const auto& f : features) out += fmt::format("{}{}{}", out.empty() ? "" : " · ", f.present ? "" : "no ", f.name);
  return out;
}

bool CpuInfo::has_flag(std::string_view f) const {
  return std::find(flags.begin(), flags.end(), f) != flags.end();
}

bool Hardware::has_gpu(Vendor v) const {
  return std::any_of(gpus.begin(), gpus.end(), [v](const PciDevice& d) { return d.vendor == v; });
}

std::string Hardware::identity() const {
  std::vector<std::string> parts;
  parts.emplace_back(os_name(os));
  for (const auto& g : gpus)
    parts.push_back(fmt::format("gpu {:04x}:{:04x} {}", g.vendor_id, g.device_id, vendor_name(g.vendor)));
  if (nvidia_driver) parts.push_back("nvidia driver " + *nvidia_driver);
  if (rocm_kfd) parts.emplace_back("kfd");
  if (soc) {
    std::string s = "soc";
    if (!soc->vendor.empty()) s += " " + soc->vendor;
    if (!soc->machine.empty()) s += " " + soc->machine;
    else if (!soc->family.empty()) s += " " + soc->family;
    if (!soc->soc_id.empty()) s += " (" + soc->soc_id + ")";
    if (s != "soc") parts.push_back(std::move(s));
  }
  if (hexagon_dsp) parts.emplace_back("hexagon");
  if (!cpu.model.empty()) parts.push_back("cpu " + cpu.model);
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += "; ";
    out += parts[i];
  }
  return out;
}

Hardware detect_hardware(const std::filesystem::path& root) {
  Hardware hw;
  try {
    hw.os = detect_os(root);
    read_pci(root, hw);
    if (auto text = read_file(root / "proc/driver/nvidia/version")) hw.nvidia_driver = parse_nvidia_version(*text);
    read_dev(root, hw);
    if (auto text = read_file(root / "proc/cpuinfo")) hw.cpu = parse_cpuinfo(*text);
    hw.soc = read_soc(root);
  } catch (const std::exception&) {
    // Only allocation failure or a path the platform cannot represent gets here; keep what was read.
  }
  return hw;
}

}  // namespace rung
