// Links rung::rung from an install tree and uses its public headers only.
#include <cstdio>

#include "rung/hardware.h"
#include "rung/ladder.h"
#include "rung/runtime.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  rung::RuntimeSearchOptions options;
  options.explicit_dir = argv[1];
  options.include_default_locations = false;
  auto hardware = rung::detect_hardware("/");
  auto found = rung::discover_runtimes(options, hardware);
  if (!found) {
    std::fprintf(stderr, "%s\n", found.error().message.c_str());
    return 1;
  }
  std::printf("chosen ONNX Runtime %s; ladder %s\n", found->chosen_build()->version.c_str(),
              rung::ladder_for(hardware).describe().c_str());
  return 0;
}
