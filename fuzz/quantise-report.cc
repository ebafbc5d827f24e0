// A `rung quantise` report read back: `rung registry add --recipe REPORT` keeps
// it as the release's recipe, whose "recipe" member enters the release key, reads
// its decision and gates (recipe_gates), and prints it whole in the release's
// JSON with the mark of a failed gate (rung/registry.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "rung/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  rung::Release r;
  r.recipe_json.assign(reinterpret_cast<const char*>(data), size);
  (void)r.release_key();
  (void)r.to_json();
  // What `registry add` reads of its gates (a failing report is refused unless marked), and the mark as stored.
  r.gate_failed = rung::recipe_gates(r.recipe_json);
  (void)r.to_json();
  return 0;
}
