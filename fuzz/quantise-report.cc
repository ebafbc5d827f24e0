// A `rung quantise` report read back: `rung registry add --recipe REPORT` keeps
// it as the release's recipe, whose "recipe" member enters the release key, and
// prints it whole in the release's JSON (rung/registry.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "rung/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  rung::Release r;
  r.recipe_json.assign(reinterpret_cast<const char*>(data), size);
  (void)r.release_key();
  (void)r.to_json();
  return 0;
}
