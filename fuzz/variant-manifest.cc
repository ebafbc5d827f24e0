// A model-variant manifest and a deployment file (rung variants, an engine
// attaching variants at launch): read from a file by the library's own
// loaders, so the whole path runs: os's bounded reader, then every field by kind.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <string>

#include "rung/variants.h"

namespace {

const std::string& scratch_file() {
  static const std::string path = "/tmp/rung-fuzz-variant-manifest-" + std::to_string(::getpid()) + ".json";
  static const int removed_at_exit = std::atexit([] { std::remove(scratch_file().c_str()); });
  (void)removed_at_exit;
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::ofstream(scratch_file(), std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  (void)rung::variants::load_manifest(scratch_file(), {{"RUNG_DEPS_DIR", "/nonexistent"}});
  (void)rung::variants::load_deployment(scratch_file());
  return 0;
}
