// A software GPU adapter rung can lend its child processes: Mesa's lavapipe
// (software Vulkan), which ONNX Runtime's WebGPU provider runs on through Dawn.
// tools/fetch-deps.sh unpacks it into the deps cache; it is never installed
// system-wide. Lending it sets the Vulkan loader's driver list and the library
// path in the environment of rung's child processes only: the host process
// never loads it. It is opt-in (--software-gpu, RUNG_SOFTWARE_GPU=1), since a
// rung running shaders on the CPU is far slower than the CPU rung itself.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "rung/result.h"

namespace rung {

struct SoftwareGpu {
  std::filesystem::path dir;       // the driver, the libdrm it needs, and lvp_icd.json
  std::filesystem::path manifest;  // the Vulkan loader's manifest, naming the driver by absolute path
  std::filesystem::path driver;    // libvulkan_lvp.so
  std::string mesa_version;        // "25.0.7-2~bpo12+1"
  std::string describe() const;    // "lavapipe (Mesa 25.0.7-2~bpo12+1, software Vulkan) in DIR"
};

struct SoftwareGpuSearch {
  std::optional<std::filesystem::path> dir;             // else RUNG_SOFTWARE_GPU_DIR, then the defaults
  std::optional<std::filesystem::path> executable_dir;  // default: the directory of /proc/self/exe
  bool read_environment = true;
};

// Looks in RUNG_SOFTWARE_GPU_DIR, then software-gpu/*/ beside the executable,
// then the install's share/rung/software-gpu/*/ reached from it. The error says where it looked and how
// to fetch it; a driver other users can write to is refused.
Result<SoftwareGpu> find_software_gpu(const SoftwareGpuSearch& search = {});

// Lends the adapter to every child process started from now on.
void lend_software_gpu(const SoftwareGpu& gpu);
void stop_lending_software_gpu();
std::optional<SoftwareGpu> lent_software_gpu();

// Whether RUNG_SOFTWARE_GPU asks for it ("1", "true", "yes"); never when rung's
// variables are not to be read (an embedded engine that did not opt in).
bool software_gpu_asked_by_environment(bool read_environment);
// Finds and lends the adapter when `asked` or the environment asks; nothing otherwise.
Status lend_software_gpu_if_asked(bool asked, bool read_environment);

}  // namespace rung
