// An application's warm launch, timed whole by tools/warm-launch.sh: it links
// rung::engine alone (the C++ layer over the C ABI), starts the engine on one
// model and waits for the probe's answer — from the cache when it is valid —
// then exits.
//   warm-launch-app CACHE_DIR MODEL RUNTIMES_DIR WORKER
#include <chrono>
#include <cstdio>
#include <thread>

#include "rung/engine.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s CACHE_DIR MODEL RUNTIMES_DIR WORKER\n", argv[0]);
    return 2;
  }
  auto options = rung::Options::create();
  if (!options) return 1;
  for (auto st : {options->set("cache_dir", argv[1]), options->set("runtime_dir", argv[3]),
                  options->set("runtime_default_locations", "false"), options->set("runtime_environment", "false"),
                  options->set("worker", argv[4]), options->add_model("classifier", argv[2])}) {
    if (!st) {
      std::fprintf(stderr, "%s\n", st.error().message.c_str());
      return 2;
    }
  }
  auto engine = rung::Engine::start(*options);
  if (!engine) {
    std::fprintf(stderr, "%s\n", engine.error().message.c_str());
    return 1;
  }
  // The decision: the background probe reports (a warm launch reads it from the cache).
  while (!engine->probe_done()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  std::printf("%s\n", engine->about_line().c_str());
  return 0;
}
