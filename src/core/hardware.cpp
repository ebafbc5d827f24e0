// What the machine is, in rung's words: from the files a Linux or Android kernel
// publishes (read by os/kernel_files.h under a root) or from a Windows
// description. Every fact is best-effort: one that could not be read is absent.
#include "rung/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "os/hardware_description.h"
#include "os/json_input.h"
#include "os/kernel_files.h"
#include "os/machine.h"
#include "rung/printable.h"

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

void read_pci(const std::optional<std::vector<PciFunctionFiles>>& functions, Hardware& hw) {
  if (!functions) return;
  hw.pci_visible = true;
  for (const auto& f : *functions) {  // sorted by address already
    if (!f.class_code || !f.vendor || !f.device) continue;
    const auto class_code = parse_hex(*f.class_code);
    if (!class_code) continue;
    const auto base_class = (*class_code >> 16) & 0xffu;
    if (base_class != 0x03u && base_class != 0x12u) continue;  // display controllers and processing accelerators
    const auto vendor_id = parse_hex16(*f.vendor), device_id = parse_hex16(*f.device);
    if (!vendor_id || !device_id) continue;
    PciDevice d;
    d.address = f.address;
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

// Arm Ltd's own cores (implementer 0x41) by their part numbers.
const char* arm_core_name(std::string_view part) {
  static constexpr std::pair<std::string_view, const char*> kParts[] = {
      {"0xd03", "Cortex-A53"}, {"0xd04", "Cortex-A35"}, {"0xd05", "Cortex-A55"}, {"0xd07", "Cortex-A57"},
      {"0xd08", "Cortex-A72"}, {"0xd09", "Cortex-A73"}, {"0xd0a", "Cortex-A75"}, {"0xd0b", "Cortex-A76"},
      {"0xd0c", "Neoverse-N1"}, {"0xd0d", "Cortex-A77"}, {"0xd40", "Neoverse-V1"}, {"0xd41", "Cortex-A78"},
      {"0xd44", "Cortex-X1"}, {"0xd46", "Cortex-A510"}, {"0xd47", "Cortex-A710"}, {"0xd48", "Cortex-X2"},
      {"0xd49", "Neoverse-N2"}, {"0xd4b", "Cortex-A78C"}, {"0xd4d", "Cortex-A715"}, {"0xd4e", "Cortex-X3"},
      {"0xd4f", "Neoverse-V2"}, {"0xd80", "Cortex-A520"}, {"0xd81", "Cortex-A720"}, {"0xd82", "Cortex-X4"}};
  for (const auto& [id, name] : kParts)
    if (id == part) return name;
  return nullptr;
}

// "4 x Cortex-A55 + 4 x Cortex-A76", in the order the kernel lists them; nullopt unless
// every part is an Arm core this table knows.
std::optional<std::string> arm_core_summary(std::string_view implementer, const std::vector<std::string>& parts) {
  if (implementer != "0x41" || parts.empty()) return std::nullopt;
  std::vector<std::pair<const char*, int>> runs;
  for (const auto& p : parts) {
    const char* name = arm_core_name(p);
    if (name == nullptr) return std::nullopt;
    if (!runs.empty() && runs.back().first == name) ++runs.back().second;
    else runs.emplace_back(name, 1);
  }
  std::string out;
  for (const auto& [name, n] : runs) out += fmt::format("{}{} x {}", out.empty() ? "" : " + ", n, name);
  return out;
}

// `core_of`, when given, gets each logical CPU's core as "physical id:core id"
// (only for CPUs whose block names both).
CpuInfo parse_cpuinfo(std::string_view text, std::map<int, std::string>* core_of = nullptr) {
  CpuInfo cpu;
  std::optional<int> processor;
  std::string hardware, board, implementer, part;
  std::vector<std::string> parts;  // one per processor block that names its part
  bool have_flags = false;
  std::set<std::pair<std::string, std::string>> cores;
  std::optional<std::string> physical_id, core_id;
  auto end_block = [&] {
    if (physical_id && core_id) {
      cores.emplace(*physical_id, *core_id);
      if (core_of && processor) (*core_of)[*processor] = *physical_id + ":" + *core_id;
    }
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
      int n = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec == std::errc() && ptr == value.data() + value.size()) processor = n;
      else processor.reset();
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
      parts.emplace_back(value);
    }
  }
  end_block();
  if (cpu.model.empty()) {
    if (!board.empty()) cpu.model = board;
    else if (!hardware.empty()) cpu.model = hardware;
    else if (auto summary = arm_core_summary(implementer, parts)) cpu.model = *summary;
    else if (!implementer.empty() || !part.empty())
      cpu.model = fmt::format("ARM implementer {} part {}", implementer.empty() ? "?" : implementer,
                              part.empty() ? "?" : part);
  }
  cpu.physical_cores = cores.empty() ? cpu.logical_cpus : static_cast<int>(cores.size());
  return cpu;
}

std::optional<SocInfo> read_soc(const std::optional<std::map<std::string, std::string>>& files) {
  if (!files) return std::nullopt;
  auto field = [&](const char* name) {
    auto it = files->find(name);
    return it == files->end() ? std::string() : it->second;
  };
  SocInfo soc;
  soc.vendor = field("vendor");
  soc.family = field("family");
  soc.machine = field("machine");
  soc.soc_id = field("soc_id");
  if (soc.vendor.empty() && soc.family.find("Snapdragon") != std::string::npos) soc.vendor = "Qualcomm";
  return soc;
}

// "0-3,8,10-11" (the kernel's cpu list) -> {0,1,2,3,8,10,11}; empty for anything else.
std::set<int> parse_cpu_list(std::string_view s) {
  std::set<int> out;
  s = trim(s);
  while (!s.empty()) {
    const auto comma = s.find(',');
    const auto item = s.substr(0, comma);
    const auto dash = item.find('-');
    int lo = 0, hi = 0;
    const auto a = item.substr(0, dash);
    if (std::from_chars(a.data(), a.data() + a.size(), lo).ptr != a.data() + a.size() || a.empty()) return {};
    hi = lo;
    if (dash != std::string_view::npos) {
      const auto b = item.substr(dash + 1);
      if (b.empty() || std::from_chars(b.data(), b.data() + b.size(), hi).ptr != b.data() + b.size()) return {};
    }
    if (lo < 0 || hi < lo || hi - lo > 4096) return {};
    for (int c = lo; c <= hi; ++c) out.insert(c);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<long long> parse_decimal(const std::optional<std::string>& raw) {
  if (!raw) return std::nullopt;
  const auto text = trim(*raw);
  if (text.empty()) return std::nullopt;
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

// The fast cores of a CPU with core classes, from (in this order) an Intel hybrid's
// PMU lists, the scheduler's cpu_capacity, or the cpufreq maxima. A capacity measures
// throughput, so a LITTLE core's is a third to two fifths of a big one's: fast is at
// least half the largest. Frequencies differ less between the classes (a Cortex-A55 at
// 1.8 GHz beside an A76 at 2.4): fast is within 15% of the highest.
void read_core_classes(const KernelFiles& k, const std::map<int, std::string>& core_of, CpuInfo& cpu) {
  auto physical = [&](const std::set<int>& cpus) {
    std::set<std::string> cores;
    for (int c : cpus) {
      auto it = core_of.find(c);
      cores.insert(it != core_of.end() ? it->second : fmt::format("cpu{}", c));
    }
    return static_cast<int>(cores.size());
  };
  if (k.p_core_list && k.e_core_list) {
    const auto fast = parse_cpu_list(*k.p_core_list), slow = parse_cpu_list(*k.e_core_list);
    if (!fast.empty() && !slow.empty()) {
      cpu.fast_cores = physical(fast);
      const int e = physical(slow);
      cpu.core_classes = fmt::format("{} P-core{} + {} E-core{} (sys/devices/cpu_core and cpu_atom)", cpu.fast_cores,
                                     cpu.fast_cores == 1 ? "" : "s", e, e == 1 ? "" : "s");
      return;
    }
  }
  if (!k.cpus) return;
  std::map<int, long long> capacity, max_khz;
  std::set<int> cpus;
  for (const auto& c : *k.cpus) {
    cpus.insert(c.number);
    if (auto v = parse_decimal(c.capacity)) capacity[c.number] = *v;
    if (auto v = parse_decimal(c.max_khz)) max_khz[c.number] = *v;
  }
  // Whether `value` (read for every CPU) parts the cores into classes; if so they are set.
  auto split = [&](const std::map<int, long long>& value, bool is_fast(long long, long long), const char* source,
                   long long unit) {
    if (value.size() < 2 || value.size() != cpus.size()) return false;  // a value missing on some CPU classes nothing
    long long top = 0;
    for (const auto& [c, v] : value) top = std::max(top, v);
    if (top <= 0) return false;
    std::set<int> fast, slow;
    std::set<long long, std::greater<>> distinct;
    for (const auto& [c, v] : value) {
      (is_fast(v, top) ? fast : slow).insert(c);
      distinct.insert(v / unit);
    }
    if (slow.empty()) return false;
    cpu.fast_cores = physical(fast);
    cpu.core_classes = fmt::format("{} big + {} LITTLE ({} {})", cpu.fast_cores, physical(slow), source, fmt::join(distinct, ", "));
    return true;
  };
  // The scheduler's capacities first; where they are the same for every core (a device tree without
  // capacity-dmips-mhz says 1024 for all) or missing on some, the cpufreq maxima.
  if (!split(capacity, [](long long v, long long top) { return 2 * v >= top; }, "cpu_capacity", 1)) {
    split(max_khz, [](long long v, long long top) { return 100 * v >= 85 * top; }, "cpufreq maxima in MHz", 1000);
  }
}

Vendor vendor_from_gpu_driver(std::string_view driver) {
  if (driver == "panfrost" || driver == "panthor" || driver == "mali" || driver == "mali_kbase") return Vendor::kArm;
  if (driver == "msm" || driver == "msm_drm" || driver == "msm_dpu" || driver == "msm_mdp" || driver == "kgsl") return Vendor::kQualcomm;
  return Vendor::kUnknown;
}

// A uevent file's KEY=value.
std::optional<std::string> uevent_value(std::string_view text, std::string_view key) {
  for (auto line : split_lines(text)) {
    if (line.size() > key.size() && starts_with(line, key) && line[key.size()] == '=')
      return std::string(trim(line.substr(key.size() + 1)));
  }
  return std::nullopt;
}

// Render nodes whose device is not a PCI function (a PCI GPU is in hw.gpus already), and
// the GPU nodes of drivers that have no DRM render node (Arm's Mali driver, Adreno's kgsl).
void read_soc_gpus(const KernelFiles& k, Hardware& hw) {
  for (const auto& r : k.render_nodes) {
    if (!r.uevent || uevent_value(*r.uevent, "PCI_SLOT_NAME")) continue;
    const auto driver = uevent_value(*r.uevent, "DRIVER").value_or("");
    hw.soc_gpus.push_back({r.node, driver, vendor_from_gpu_driver(driver)});
  }
  for (const auto& [node, driver] : k.soc_gpu_nodes) hw.soc_gpus.push_back({node, driver, vendor_from_gpu_driver(driver)});
}

// The devicetree's model string (NUL-terminated), on boards that boot from one.
std::string board_name(std::optional<std::string> text) {
  if (!text) return {};
  const auto nul = text->find('\0');
  if (nul != std::string::npos) text->resize(nul);
  for (char& c : *text)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return std::string(trim(*text));
}

// A Windows device's description: windows.json at the root, or this machine's own from
// os/hardware_description.h (the same JSON, made from DXGI and the processor calls):
//   {"dxgi_adapters": [{"name", "vendor_id" (hex text), "device_id", "dedicated_memory_mb", "software"}],
//    "dxgi_problem": why no adapter could be listed (optional),
//    "cpu": {"name", "logical_processors", "cores", "features": [...], "cores_by_efficiency_class": {"1": 6, "0": 8}}}
constexpr char kWindowsDescription[] = "windows.json";

Status read_windows_adapter(const nlohmann::json& a, std::size_t index, Hardware& hw) {
  JsonFields f(a, fmt::format("dxgi_adapters[{}]", index));
  DisplayAdapter d;
  d.name = f.text("name");
  const std::string vendor = f.text("vendor_id"), device = f.text("device_id");
  const auto vendor_id = parse_hex16(vendor), device_id = parse_hex16(device);
  f.require(vendor_id.has_value(), fmt::format("vendor_id '{}' is not 1 to 4 hex digits", vendor.substr(0, 40)));
  f.require(device_id.has_value(), fmt::format("device_id '{}' is not 1 to 4 hex digits", device.substr(0, 40)));
  d.dedicated_memory_mb = static_cast<std::uint64_t>(f.integer("dedicated_memory_mb", 0, 0, std::int64_t{1} << 40));
  d.software = f.flag("software", false);
  RUNG_RETURN_IF_ERROR(f.finish());
  d.vendor_id = *vendor_id;
  d.device_id = *device_id;
  d.vendor = vendor_from_pci_id(d.vendor_id);
  // Microsoft's own adapter (vendor 0x1414) is the Basic Render Driver whatever its flags say.
  if (d.vendor_id == 0x1414) d.software = true;
  if (!d.software) {
    PciDevice g;
    g.address = fmt::format("dxgi:{}", index);
    g.class_code = 0x030000;
    g.vendor_id = d.vendor_id;
    g.device_id = d.device_id;
    g.vendor = d.vendor;
    hw.gpus.push_back(g);
  }
  hw.adapters.push_back(std::move(d));
  return {};
}

Status read_windows_cpu(const nlohmann::json& c, CpuInfo& cpu) {
  JsonFields f(c, "cpu");
  cpu.model = f.text("name", "");
  cpu.logical_cpus = static_cast<int>(f.integer("logical_processors", 0, 1, 65536));
  cpu.physical_cores = static_cast<int>(f.integer("cores", 0, 1, 65536));
  cpu.flags = f.texts("features");
  std::map<int, int, std::greater<>> by_class;  // EfficiencyClass: higher is faster
  if (const auto* classes = f.object("cores_by_efficiency_class", false)) {
    for (const auto& [key, count] : classes->items()) {
      int klass = -1;
      const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), klass);
      const auto n = json_integer(count, 1, 65536);
      f.require(ec == std::errc() && ptr == key.data() + key.size() && klass >= 0 && klass <= 255 && n.has_value(),
                fmt::format("cores_by_efficiency_class: '{}' is not a class 0 to 255 with a count of cores", key.substr(0, 40)));
      if (n) by_class[klass] = static_cast<int>(*n);
    }
  }
  RUNG_RETURN_IF_ERROR(f.finish());
  if (cpu.physical_cores == 0) cpu.physical_cores = cpu.logical_cpus;
  if (by_class.size() >= 2) {
    cpu.fast_cores = by_class.begin()->second;
    std::vector<std::string> counts, names;
    for (const auto& [klass, n] : by_class) {
      counts.push_back(std::to_string(n));
      names.push_back(std::to_string(klass));
    }
    cpu.core_classes = fmt::format("{} cores (EfficiencyClass {})", fmt::join(counts, " + "), fmt::join(names, " and "));
  }
  return {};
}

void read_windows_description(const nlohmann::json& j, const std::string& where, Hardware& hw) {
  hw.os = OsKind::kWindows;
  hw.pci_visible = true;  // DXGI lists every adapter, as PCI would
  auto say = [&](const Status& s) {
    if (!s) hw.unreadable.push_back(fmt::format("{}: {}", where, s.error().message));
  };
  JsonFields f(j, "windows.json");
  if (const auto* adapters = f.array("dxgi_adapters", 64)) {
    for (std::size_t i = 0; i < adapters->size(); ++i) say(read_windows_adapter((*adapters)[i], i, hw));
  }
  if (const std::string problem = f.text("dxgi_problem", ""); !problem.empty()) {
    hw.unreadable.push_back(fmt::format("{}: no adapter listed: {}", where, printable(problem, 300)));
  }
  if (const auto* cpu = f.object("cpu", false)) say(read_windows_cpu(*cpu, hw.cpu));
  say(f.finish());
}

bool read_windows(const fs::path& root, Hardware& hw) {
  if (root == fs::path("/")) {
    if (auto native = native_hardware_description()) {
      auto j = parse_json(*native);
      if (!j) {
        hw.os = OsKind::kWindows;
        hw.unreadable.push_back("this machine's description: " + j.error().message);
      } else {
        read_windows_description(*j, "this machine's description", hw);
      }
      return true;
    }
  }
  const fs::path file = root / kWindowsDescription;
  std::error_code ec;
  if (!fs::exists(file, ec) || ec) return false;
  auto j = read_json_file(file);
  if (!j) {
    hw.os = OsKind::kWindows;
    hw.unreadable.push_back(j.error().message);
    return true;
  }
  read_windows_description(*j, file.string(), hw);
  return true;
}

OsKind detect_os(const fs::path& root, const KernelFiles& k) {
  if (k.android) return OsKind::kAndroid;
  if (root == fs::path("/")) {
    const std::string_view built_for = built_for_system();
    if (built_for == "macos") return OsKind::kMacos;
    if (built_for == "windows") return OsKind::kWindows;
  }
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
    case Vendor::kArm: return "Arm";
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

int default_inference_threads(const CpuInfo& cpu) {
  if (cpu.fast_cores > 0) return cpu.fast_cores;
  return std::max(1, cpu.physical_cores - 2);
}

std::string inference_threads_reason(const CpuInfo& cpu) {
  const int n = default_inference_threads(cpu);
  if (cpu.fast_cores > 0) return fmt::format("{} thread{}: the fast cores of {}", n, n == 1 ? "" : "s", cpu.core_classes);
  return fmt::format("{} thread{}: the {} physical cores less two, at least one", n, n == 1 ? "" : "s", cpu.physical_cores);
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
  for (const auto& g : soc_gpus)
    parts.push_back(fmt::format("gpu {} ({})", vendor_name(g.vendor), g.driver.empty() ? "no driver named" : g.driver));
  if (hexagon_dsp) parts.emplace_back("hexagon");
  if (!board.empty() && board != cpu.model) parts.push_back("board " + board);
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
    if (read_windows(root, hw)) return hw;
    const KernelFiles k = read_kernel_files(root);
    hw.os = detect_os(root, k);
    read_pci(k.pci, hw);
    if (k.nvidia_version) hw.nvidia_driver = parse_nvidia_version(*k.nvidia_version);
    hw.nvidia_device_nodes = k.nvidia_nodes;
    hw.rocm_kfd = k.kfd;
    for (const auto& r : k.render_nodes) hw.dri_render_nodes.push_back(r.node);
    hw.hexagon_dsp = k.hexagon_dsp;
    read_soc_gpus(k, hw);
    std::map<int, std::string> core_of;
    if (k.cpuinfo) hw.cpu = parse_cpuinfo(*k.cpuinfo, &core_of);
    read_core_classes(k, core_of, hw.cpu);
    hw.soc = read_soc(k.soc);
    hw.board = board_name(k.devicetree_model);
  } catch (const std::exception&) {
    // Only allocation failure or a path the platform cannot represent gets here; keep what was read.
  }
  return hw;
}

}  // namespace rung
