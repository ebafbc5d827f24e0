// What a Linux (or Android) kernel publishes about the machine, read from the
// files under a root: `/` itself, or a fixture tree laid out like it (sysfs,
// procfs, device nodes). This is the one place that knows those paths. It gives
// raw text and names, each absent when it could not be read; what they mean
// (a GPU's vendor, the core classes, the CPU model) is core/hardware.cpp's to say.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rung {

// One PCI function as sysfs lists it: its address and the text of its class,
// vendor and device files.
struct PciFunctionFiles {
  std::string address;  // "0000:01:00.0"
  std::optional<std::string> class_code, vendor, device;
};

// One logical CPU's scheduler capacity and cpufreq maximum (kHz), as text.
struct CpuFiles {
  int number = 0;
  std::optional<std::string> capacity, max_khz;
};

// One DRM render node, its device node's name and its device's uevent text.
struct RenderNodeFiles {
  std::string node;  // as device_node() names it: "/dev/dri/renderD128"
  std::optional<std::string> uevent;
};

struct KernelFiles {
  bool android = false;                                 // an Android system partition (system/build.prop)
  std::optional<std::vector<PciFunctionFiles>> pci;     // in address order; nullopt: the bus could not be listed
  std::optional<std::string> nvidia_version;            // the NVIDIA driver's version file
  std::optional<std::string> cpuinfo;                   // the processors, block by block
  std::optional<std::string> p_core_list, e_core_list;  // an Intel hybrid's PMU cpu lists ("0-7")
  std::optional<std::vector<CpuFiles>> cpus;            // by number; nullopt: the CPUs could not be listed
  std::optional<std::map<std::string, std::string>> soc;  // soc0's vendor, family, machine, soc_id (trimmed); nullopt: no soc0
  std::optional<std::string> devicetree_model;          // the board's name, NUL-terminated as the kernel keeps it
  std::vector<std::string> nvidia_nodes;                // device nodes of the NVIDIA driver
  std::vector<RenderNodeFiles> render_nodes;            // DRM render nodes, sorted
  bool kfd = false;                                     // ROCm's kernel driver node
  bool hexagon_dsp = false;                             // a FastRPC node of Qualcomm's compute DSP
  std::vector<std::pair<std::string, std::string>> soc_gpu_nodes;  // GPU nodes without a render node: {node, driver}
};

// Every read is best-effort: a missing or unreadable file is an absent fact, never an error.
KernelFiles read_kernel_files(const std::filesystem::path& root);

}  // namespace rung
