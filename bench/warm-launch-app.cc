// An application's warm launch, timed whole by tools/warm-launch.sh: it links
// rung::engine alone (public headers only), starts the engine on one model and
// waits for the probe's answer — from the cache when it is valid — then exits.
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
  rung::EngineOptions options;
  options.cache_dir = argv[1];
  options.runtimes.explicit_dir = argv[3];
  options.runtimes.include_default_locations = false;
  options.runtimes.read_environment = false;
  options.worker = argv[4];
  rung::ModelRegistration model;
  model.name = "classifier";
  model.f32 = argv[2];
  options.models.push_back(model);

  auto engine = rung::Engine::start(options);
  if (!engine) {
    std::fprintf(stderr, "%s\n", engine.error().message.c_str());
    return 1;
  }
  // The decision: the background probe reports (a warm launch reads it from the cache).
  while (!(*engine)->probe_done()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  std::printf("%s (ONNX Runtime %s)\n", (*engine)->about_line().c_str(), (*engine)->runtime().version.c_str());
  return 0;
}
