#include "variants_args.h"

#include <cstdlib>

#include "commands.h"
#include "numeric_args.h"
#include "rung/path_text.h"

namespace rung::cli {
namespace fs = std::filesystem;

namespace {

fs::path manifests_dir() {
  std::error_code ec;
  if (fs::is_directory(RUNG_MANIFESTS_DIR, ec)) return RUNG_MANIFESTS_DIR;
  return RUNG_INSTALLED_MANIFESTS_DIR;
}

}  // namespace

fs::path bundled_manifest() { return manifests_dir() / "bundled.variants.json"; }

void VariantArgs::add_to(CLI::App& command) {
  add_text(command, "--variants", manifest, "The model-variant manifest (default: the bundled models')");
  add_text(command, "--deployment", deployment, "The rungs the application provisions (default: the bundled deployment)");
}

std::pair<variants::Manifest, variants::Deployment> VariantArgs::load() const {
  const fs::path m = manifest.empty() ? bundled_manifest() : path_from_utf8(manifest);
  const fs::path d = deployment.empty() ? manifests_dir() / "bundled.deployment.json" : path_from_utf8(deployment);
  auto loaded = variants::load_manifest(m, {{"RUNG_DEPS_DIR", RUNG_DEFAULT_DEPS_DIR}});
  if (!loaded) throw CliError(kExitUsage, loaded.error().message);
  auto provisioned = variants::load_deployment(d);
  if (!provisioned) throw CliError(kExitUsage, provisioned.error().message);
  return {std::move(*loaded), std::move(*provisioned)};
}

}  // namespace rung::cli
