// The probe's cache file (probe.json): read on every launch of the engine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "probe/cache.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The fingerprint and ladder the seed corpus was written for.
  static const std::string fingerprint = R"({"device":"fuzz","models":[]})";
  static const std::vector<std::string> ladder{"tensorrt", "cuda", "webgpu", "cpu"};
  auto read = rung::parse_probe_cache(text, "probe.json", fingerprint, ladder);
  if (read.outcome) (void)read.outcome->about_line();
  return 0;
}
