// Option groups beside the model options: where ONNX Runtime builds are looked
// for (every command that loads one), where plugin EPs are (every command that
// walks the ladder) and the software GPU (every command whose workers may run WebGPU).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "rung/limits.h"
#include "rung/runtime.h"

namespace rung::cli {

// --ort-dir DIR, --allow-writable-runtime.
struct RuntimeArgs {
  std::string ort_dir;
  bool allow_writable = false;

  void add_to(CLI::App& command);
  void apply_to(RuntimeSearchOptions& search) const;
};

// --plugin-dir DIR (repeatable), --allow-writable-plugin.
struct PluginArgs {
  std::vector<std::string> dirs;
  bool allow_writable = false;

  void add_to(CLI::App& command);
  // Only --allow-writable-plugin, for a command that names plugin libraries otherwise (parity's rung=/path/x.so).
  void add_allow_to(CLI::App& command);
  void apply_to(RuntimeSearchOptions& search) const;
  std::vector<std::filesystem::path> paths() const;
};

// --worker-memory-mb N: the most data each worker process may hold (rung/limits.h);
// by default half the machine's memory, at least 2048 MiB; 0: no limit.
struct WorkerArgs {
  std::uint64_t memory_mb = kWorkerMemoryDefault;

  void add_to(CLI::App& command);
};

// --software-gpu: lend Mesa's lavapipe (software Vulkan) to the command's child
// processes, so that the WebGPU rung runs there (RUNG_SOFTWARE_GPU=1 does the same).
struct SoftwareGpuArgs {
  bool lend = false;

  void add_to(CLI::App& command);
  // Lends it when the flag or the environment asks; a usage error (CliError) when it is not there.
  void apply() const;
};

}  // namespace rung::cli
