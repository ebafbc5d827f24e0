#include "os/kernel_files.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <system_error>

#include "os/machine.h"
#include "os/read_file.h"
#include "rung/directory.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec) && !ec;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string trimmed(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(kSpace) - b + 1));
}

// The names in a directory, sorted; nullopt when it cannot be listed.
std::optional<std::vector<std::string>> names_in(const fs::path& dir, bool files_only = false) {
  auto entries = list_directory(dir);
  if (!entries) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& e : *entries) {
    std::error_code ec;
    if (files_only && fs::is_directory(e, ec)) continue;
    names.push_back(e.filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::vector<PciFunctionFiles>> read_pci(const fs::path& root) {
  const fs::path devices = root / "sys/bus/pci/devices";
  auto names = names_in(devices);
  if (!names) return std::nullopt;
  std::vector<PciFunctionFiles> out;
  for (const auto& address : *names) {
    const fs::path dev = devices / path_from_utf8(address);
    out.push_back({address, read_system_file(dev / "class"), read_system_file(dev / "vendor"), read_system_file(dev / "device")});
  }
  return out;
}

std::optional<std::vector<CpuFiles>> read_cpus(const fs::path& root) {
  const fs::path dir = root / "sys/devices/system/cpu";
  auto names = names_in(dir);
  if (!names) return std::nullopt;
  std::vector<CpuFiles> out;
  for (const auto& n : *names) {
    int c = 0;
    if (n.size() < 4 || n.compare(0, 3, "cpu") != 0) continue;  // cpu0, cpu1, ...; not cpufreq, cpuidle
    if (std::from_chars(n.data() + 3, n.data() + n.size(), c).ptr != n.data() + n.size()) continue;
    const fs::path cpu = dir / path_from_utf8(n);
    out.push_back({c, read_system_file(cpu / "cpu_capacity"), read_system_file(cpu / "cpufreq/cpuinfo_max_freq")});
  }
  std::sort(out.begin(), out.end(), [](const CpuFiles& a, const CpuFiles& b) { return a.number < b.number; });
  return out;
}

std::optional<std::map<std::string, std::string>> read_soc(const fs::path& root) {
  const fs::path dir = root / "sys/devices/soc0";
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || ec) return std::nullopt;
  std::map<std::string, std::string> soc;
  for (const char* field : {"vendor", "family", "machine", "soc_id"}) {
    if (auto text = read_system_file(dir / path_from_utf8(field))) soc[field] = trimmed(*text);
  }
  return soc;
}

void read_device_nodes(const fs::path& root, KernelFiles& k) {
  if (auto names = names_in(root / "dev", /*files_only=*/true)) {
    for (const auto& n : *names)
      if (starts_with(n, "nvidia")) k.nvidia_nodes.push_back(device_node(n));
  }
  k.kfd = path_exists(root / "dev/kfd");
  if (auto names = names_in(root / "dev/dri")) {
    for (const auto& n : *names) {
      if (!starts_with(n, "renderD")) continue;
      k.render_nodes.push_back({device_node("dri/" + n), read_system_file(root / "sys/class/drm" / path_from_utf8(n) / "device/uevent")});
    }
  }
  k.hexagon_dsp = path_exists(root / "dev/fastrpc-cdsp") || path_exists(root / "dev/adsprpc-smd");
  // Arm's Mali driver and Adreno's kgsl make a GPU node of their own, with no DRM render node.
  for (const auto& [node, driver] : {std::pair{"mali0", "mali"}, std::pair{"kgsl-3d0", "kgsl"}}) {
    if (path_exists(root / "dev" / path_from_utf8(node))) k.soc_gpu_nodes.emplace_back(device_node(node), driver);
  }
}

}  // namespace

KernelFiles read_kernel_files(const fs::path& root) {
  KernelFiles k;
  k.android = path_exists(root / "system/build.prop");
  k.pci = read_pci(root);
  k.nvidia_version = read_system_file(root / "proc/driver/nvidia/version");
  k.cpuinfo = read_system_file(root / "proc/cpuinfo");
  k.p_core_list = read_system_file(root / "sys/devices/cpu_core/cpus");
  k.e_core_list = read_system_file(root / "sys/devices/cpu_atom/cpus");
  k.cpus = read_cpus(root);
  k.soc = read_soc(root);
  k.devicetree_model = read_system_file(root / "sys/firmware/devicetree/base/model");
  read_device_nodes(root, k);
  return k;
}

}  // namespace rung
