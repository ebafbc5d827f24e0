// The --software-gpu flag every command that starts workers shares.
#include "commands.h"
#include "rung/software_gpu.h"

namespace rung::cli {

void add_software_gpu_flag(CLI::App& cmd, bool& flag) {
  cmd.add_flag("--software-gpu", flag,
               "Lend Mesa's lavapipe (software Vulkan, fetched by tools/fetch-deps.sh) to the workers, so the WebGPU rung runs "
               "(far slower than the CPU; also RUNG_SOFTWARE_GPU=1)");
}

void lend_software_gpu_if_asked_or_throw(bool flag) {
  if (auto s = lend_software_gpu_if_asked(flag); !s) throw CliError(kExitUsage, "--software-gpu: " + s.error().message);
}

}  // namespace rung::cli
