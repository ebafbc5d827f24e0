// A model-variant manifest and a deployment file (rung variants, an engine
// attaching variants at launch): read from a file by the library's own
// loaders, so the whole path runs: os's bounded reader, then every field by kind.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scratch_file.h"
#include "rung/variants.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& file = rung::fuzz::write_scratch_file("variant-manifest", "json", data, size);
  (void)rung::variants::load_manifest(file, {{"RUNG_DEPS_DIR", "/nonexistent"}});
  (void)rung::variants::load_deployment(file);
  return 0;
}
