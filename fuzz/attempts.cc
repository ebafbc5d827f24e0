// The in-process probe's strike file (strikes.json) and attempt file (attempt).
#include <cstddef>
#include <cstdint>
#include <string>

#include "probe/attempts.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)rung::parse_strike_file(text);
  (void)rung::parse_attempt_file(text);
  return 0;
}
