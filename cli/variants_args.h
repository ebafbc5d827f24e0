// --variants FILE and --deployment FILE: a model-variant manifest and the rungs an
// application provisions; the bundled ones (manifests/) when not given.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>

#include "rung/variants.h"

namespace rung::cli {

struct VariantArgs {
  std::string manifest;
  std::string deployment;

  void add_to(CLI::App& command);
  bool given() const { return !manifest.empty(); }
  // Throws CliError (usage) when either cannot be read.
  std::pair<variants::Manifest, variants::Deployment> load() const;
};

// The bundled manifest of the sample models, beside the sources or installed.
std::filesystem::path bundled_manifest();

}  // namespace rung::cli
