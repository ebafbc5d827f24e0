// Starts the engine from an install tree as an application would: one model,
// the probe in the background, one job, one inference. Public headers only.
#include <cstdio>
#include <vector>

#include "rung/engine.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s RUNTIMES_DIR MODEL WORKER CACHE_DIR\n", argv[0]);
    return 2;
  }
  rung::EngineOptions options;
  options.runtimes.explicit_dir = argv[1];
  options.runtimes.include_default_locations = false;
  options.worker = argv[3];
  options.cache_dir = argv[4];
  rung::ModelRegistration model;
  model.name = "classifier";
  model.f32 = argv[2];
  options.models.push_back(model);

  auto engine = rung::Engine::start(options);
  if (!engine) {
    std::fprintf(stderr, "%s\n", engine.error().message.c_str());
    return 1;
  }
  (*engine)->wait_until_settled();
  auto job = (*engine)->open_job();
  if (!job) return 1;
  auto session = (*job)->session("classifier");
  if (!session) {
    std::fprintf(stderr, "%s\n", session.error().message.c_str());
    return 1;
  }
  rung::Tensor input;
  input.name = "x";
  input.shape = {1, 3, 48, 192};
  input.bytes.resize(sizeof(float) * 3 * 48 * 192);
  auto outputs = (*session)->run({input});
  if (!outputs) {
    std::fprintf(stderr, "%s\n", outputs.error().message.c_str());
    return 1;
  }
  std::printf("engine consumer: %s ran on %s as %s, %zu output(s)\n", (*session)->model_name().c_str(),
              (*session)->rung().c_str(), (*session)->model_id().c_str(), outputs->size());
  return 0;
}
