// The models a command works on: given with --model NAME=PATH (or PATH), with
// --role NAME=ROLE and --input-spec NAME=FILE; the bundled sample models when none are given.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rung/model.h"

namespace rung::cli {

struct ModelArgs {
  std::vector<std::string> models;
  std::vector<std::string> roles;
  std::vector<std::string> input_specs;
  std::uint64_t max_tensor_mb = 0;  // --max-tensor-mb; 0: each spec's own limit (1024 MiB unless it says)

  void add_to(CLI::App& command);
  // Throws CliError (usage) on a bad argument, and on a model file that cannot be read (require_model_file).
  std::vector<ModelRegistration> resolve() const;
  // --role and --input-spec on models registered otherwise (a manifest's groups); a spec in specs/ named after a model.
  void apply_roles_and_specs(std::vector<ModelRegistration>& models) const;
};

// A model file a command was given (`option` names where: "--model tiny=m.onnx",
// "--ref", "the model"), checked before any work: a usage error (exit 2) naming
// the file and why when it is missing, a directory, a FIFO or cannot be opened.
void require_model_file(const std::string& option, const std::filesystem::path& file);

// --max-tensor-mb N: the largest tensor made or read for a model, in MiB.
void add_max_tensor_option(CLI::App& command, std::uint64_t& mb);

// RUNG_CACHE_DIR, else the user's cache directory (rung/user_dirs.h) / probe:
// $XDG_CACHE_HOME/rung/probe, ~/.cache/rung/probe, or <tmp>/rung-<uid>/cache/probe.
// Throws CliError (usage) naming what to set when none of them can be used.
std::filesystem::path default_cache_dir();
// The same, or nullopt where there is none (HOME unset and no private directory to be had).
std::optional<std::filesystem::path> cache_dir_if_any();

}  // namespace rung::cli
