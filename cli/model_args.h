// The models a command works on: given with --model NAME=PATH (or PATH), with
// --role NAME=ROLE and --input-spec NAME=FILE; the bundled sample models when none are given.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "rung/model.h"

namespace rung::cli {

struct ModelArgs {
  std::vector<std::string> models;
  std::vector<std::string> roles;
  std::vector<std::string> input_specs;

  void add_to(CLI::App& command);
  // Throws CliError (usage) on a bad argument.
  std::vector<ModelRegistration> resolve() const;
  // --role and --input-spec on models registered otherwise (a manifest's groups); a spec in specs/ named after a model.
  void apply_roles_and_specs(std::vector<ModelRegistration>& models) const;
};

// RUNG_CACHE_DIR, else $XDG_CACHE_HOME/rung/probe, else ~/.cache/rung/probe.
std::filesystem::path default_cache_dir();

}  // namespace rung::cli
