// Option groups beside the model options: where ONNX Runtime builds are looked
// for (every command that loads one) and where plugin EPs are (every command
// that walks the ladder).
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "rung/runtime.h"

namespace rung::cli {

// --ort-dir DIR, --allow-writable-runtime.
struct RuntimeArgs {
  std::string ort_dir;
  bool allow_writable = false;

  void add_to(CLI::App& command);
  void apply_to(RuntimeSearchOptions& search) const;
};

// --plugin-dir DIR (repeatable).
struct PluginArgs {
  std::vector<std::string> dirs;

  void add_to(CLI::App& command);
  std::vector<std::filesystem::path> paths() const;
};

}  // namespace rung::cli
