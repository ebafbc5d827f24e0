#include "runtime_args.h"

#include <filesystem>

#include "commands.h"
#include "numeric_args.h"
#include "rung/input_words.h"
#include "rung/path_text.h"
#include "rung/software_gpu.h"

namespace rung::cli {

void RuntimeArgs::add_to(CLI::App& command) {
  add_text(command, "--ort-dir", ort_dir, "Use the ONNX Runtime build in this directory (an error when none there can serve)");
  command.add_flag("--allow-writable-runtime", allow_writable, "Load ONNX Runtime libraries that other users can write to");
}

void RuntimeArgs::apply_to(RuntimeSearchOptions& search) const {
  if (!ort_dir.empty()) search.explicit_dir = path_from_utf8(ort_dir);
  // A directory the user named is the answer: a build there refused (writable by others, not a runtime) is an
  // error saying why, never a run on some other build the user did not ask for.
  search.explicit_dir_must_serve = !ort_dir.empty();
  search.allow_writable_by_others = allow_writable;
}

void PluginArgs::add_to(CLI::App& command) {
  // A directory, checked as the arguments are read: a file, a FIFO or a socket named here
  // is an error naming it (exit 2), never a ladder quietly without plugins.
  const CLI::Validator a_directory(
      [](std::string& text) -> std::string {
        auto st = check_input_directory(path_from_utf8(text), text);
        return st ? "" : st.error().message;
      },
      "DIR");
  add_text(command, "--plugin-dir", dirs, "Each plugin EP library here becomes a rung (also RUNG_PLUGIN_DIR); an absolute path")->check(a_directory);
  add_allow_to(command);
}

void PluginArgs::add_allow_to(CLI::App& command) {
  command.add_flag("--allow-writable-plugin", allow_writable,
                   "Load plugin EP libraries that other users can write to, or in directories they can");
}

void PluginArgs::apply_to(RuntimeSearchOptions& search) const { search.allow_writable_plugins = allow_writable; }

std::vector<std::filesystem::path> PluginArgs::paths() const {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) out.push_back(path_from_utf8(d));
  return out;
}

void WorkerArgs::add_to(CLI::App& command) {
  add_number(command, "--worker-memory-mb", memory_mb,
             "The most data each worker process may hold (default: half this machine's memory, at least 2048; 0: no limit): a provider "
             "that allocates without end ends its worker, which says it ran out of memory",
             knob_range<std::uint64_t>("worker_memory_mb"));
}

void SoftwareGpuArgs::add_to(CLI::App& command) {
  command.add_flag("--software-gpu", lend,
                   "Lend Mesa's lavapipe (software Vulkan, fetched by tools/fetch-deps.sh) to the workers, so the WebGPU rung runs "
                   "(far slower than the CPU; also RUNG_SOFTWARE_GPU=1)");
}

void SoftwareGpuArgs::apply() const {
  if (auto s = lend_software_gpu_if_asked(lend, /*read_environment=*/true); !s) throw CliError(kExitUsage, "--software-gpu: " + s.error().message);
}

}  // namespace rung::cli
