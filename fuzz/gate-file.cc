// A parity gate file: preprocessing, input spec and gates, read before any model loads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "parity/gate_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A text gate's character list resolves against base_dir: a directory with none keeps file reads out.
  (void)rung::parse_gate_file(std::string(reinterpret_cast<const char*>(data), size), "/nonexistent", "gate.json");
  return 0;
}
