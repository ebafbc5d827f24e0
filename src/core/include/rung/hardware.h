// What the device has, read from files (sysfs, procfs, /dev) under a root
// directory, so tests feed fixture trees instead of the machine they run on.
// A Windows device is described by one file at the root, windows.json: its
// DXGI adapters and its CPU, as Windows reports them (docs/windows.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rung {

enum class Vendor { kUnknown, kNvidia, kAmd, kIntel, kQualcomm, kApple, kArm };

const char* vendor_name(Vendor v);  // "NVIDIA", "AMD", "Intel", "Qualcomm", "Apple", "Arm", "unknown"

enum class OsKind { kLinux, kAndroid, kMacos, kWindows };
const char* os_name(OsKind os);  // "linux", "android", "macos", "windows"

// A PCI function whose class is display (0x03xxxx) or processing accelerator (0x12xxxx).
struct PciDevice {
  std::string address;      // "0000:01:00.0"
  std::uint32_t class_code = 0;
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  Vendor vendor = Vendor::kUnknown;
};

struct CpuInfo {
  std::string model;                 // "AMD Ryzen 9 7950X 16-Core Processor"
  std::vector<std::string> flags;    // from /proc/cpuinfo "flags" (x86) or "Features" (ARM)
  int logical_cpus = 0;
  int physical_cores = 0;            // distinct (physical id, core id) pairs; logical count when absent
  // A CPU of two or more core classes (big.LITTLE, an Intel hybrid's P- and E-cores):
  // the physical cores of its fast class, and how that was told; 0 and empty on a
  // uniform CPU or when nothing says. See fast_cores.
  int fast_cores = 0;
  std::string core_classes;          // "4 big + 4 LITTLE (cpu_capacity 1024 and 414)"
  bool has_flag(std::string_view f) const;
};

// ONNX Runtime's intra-op pool for inference: on a CPU of mixed core classes its
// fast cores (the LITTLE ones are the system's: a pool spread over both runs at
// the LITTLE cores' pace); otherwise the physical cores less two, at least one.
int default_inference_threads(const CpuInfo& cpu);
// "4 threads: the big cores of 4 big + 4 LITTLE (cpu_capacity 1024 and 414)"
std::string inference_threads_reason(const CpuInfo& cpu);

// The CPU features that decide how fast a quantised form runs on ONNX Runtime's
// CPU provider: on x86, AVX2 (the int8 kernels' floor), AVX-512, VNNI (int8 dot
// products in one instruction: AVX512_VNNI or AVX-VNNI) and AMX; on ARM, the
// dot-product instructions and i8mm (int8 matrix multiply).
struct QuantisedSpeedFeature {
  const char* id;    // "avx2", "avx512", "vnni", "amx", "dotprod", "i8mm"
  const char* name;  // "AVX2", "AVX-512", "VNNI", "AMX", "dot-product", "i8mm"
  bool present = false;
};
// Every feature of the CPU's architecture family (x86 or ARM, told by the flags
// seen), each present or not; empty when /proc/cpuinfo gave no flags.
std::vector<QuantisedSpeedFeature> quantised_speed_features(const CpuInfo& cpu);
// "AVX2 · no AVX-512 · no VNNI · no AMX"; "unknown (no CPU flags read)" when empty.
std::string quantised_speed_line(const std::vector<QuantisedSpeedFeature>& features);

// /sys/devices/soc0/* on Android and other SoC Linux devices.
struct SocInfo {
  std::string vendor;    // "Qualcomm" (from soc0/vendor, or inferred from family)
  std::string family;    // "Snapdragon"
  std::string machine;   // "SM8635"
  std::string soc_id;    // "614"
};

// A GPU on the SoC, seen without PCI: a DRM render node and its kernel driver
// (panfrost or panthor: Arm Mali; msm, msm_dpu: Qualcomm Adreno; v3d: Broadcom VideoCore),
// or the node of Arm's own Mali driver (/dev/mali0).
struct SocGpu {
  std::string node;     // "/dev/dri/renderD128", "/dev/mali0"
  std::string driver;   // "panthor", "msm", "mali"; empty when the node says nothing
  Vendor vendor = Vendor::kUnknown;
};

// A display adapter as Windows' DXGI lists it (IDXGIAdapter1::GetDesc1). A
// software adapter (the Basic Render Driver, WARP) is listed but is no GPU.
struct DisplayAdapter {
  std::string name;                   // "NVIDIA GeForce RTX 4070"
  std::uint16_t vendor_id = 0;
  std::uint16_t device_id = 0;
  std::uint64_t dedicated_memory_mb = 0;
  bool software = false;
  Vendor vendor = Vendor::kUnknown;
};

struct Hardware {
  OsKind os = OsKind::kLinux;
  std::vector<PciDevice> gpus;                  // display and accelerator PCI functions
  std::optional<std::string> nvidia_driver;     // "550.54.14", from /proc/driver/nvidia/version
  std::vector<std::string> nvidia_device_nodes; // "/dev/nvidia0", "/dev/nvidiactl", ...
  bool rocm_kfd = false;                        // /dev/kfd present
  std::vector<std::string> dri_render_nodes;    // "/dev/dri/renderD128", ...
  std::vector<SocGpu> soc_gpus;                 // render nodes of no PCI device, with their drivers
  std::string board;                            // the devicetree's model: "Xunlong Orange Pi 5"
  bool pci_visible = false;                     // /sys/bus/pci/devices could be listed
  CpuInfo cpu;
  std::optional<SocInfo> soc;
  bool hexagon_dsp = false;                     // a Qualcomm compute DSP node (/dev/fastrpc-cdsp, /dev/adsprpc-smd)
  // Windows: DXGI's adapters in its order; each hardware one is in `gpus` too (by its
  // vendor and device ids, as on Linux, with the address "dxgi:N").
  std::vector<DisplayAdapter> adapters;
  // What could not be read as its format says (a damaged windows.json), so it is said, not silently absent.
  std::vector<std::string> unreadable;

  bool has_gpu(Vendor v) const;
  // A stable one-line identity of the accelerators and CPU, e.g.
  // "linux; gpu 10de:2684 NVIDIA; nvidia driver 550.54.14; cpu AMD Ryzen 9 7950X 16-Core Processor".
  // Goes into the probe's fingerprint: a driver update or a new card changes it.
  std::string identity() const;
};

// Reads the hardware description under `root` ("/" for this machine).
// Missing files are simply absent facts; this never fails.
Hardware detect_hardware(const std::filesystem::path& root = "/");

}  // namespace rung
