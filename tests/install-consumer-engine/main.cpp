// Starts the engine from an install tree as an application would: one model,
// the probe in the background, one job, one inference. Public headers only:
// the C++ layer (rung/engine.h) over the C ABI.
#include <cstdio>
#include <vector>

#include "rung/engine.h"

namespace {

int failed(const rung::Error& e) {
  std::fprintf(stderr, "%s\n", e.message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s RUNTIMES_DIR MODEL WORKER CACHE_DIR\n", argv[0]);
    return 2;
  }
  auto options = rung::Options::create();
  if (!options) return failed(options.error());
  for (auto st : {options->set("runtime_dir", argv[1]), options->set("runtime_default_locations", "false"),
                  options->set("worker", argv[3]), options->set("cache_dir", argv[4]), options->add_model("classifier", argv[2])}) {
    if (!st) return failed(st.error());
  }
  auto engine = rung::Engine::start(*options);
  if (!engine) return failed(engine.error());
  engine->wait_until_settled();
  auto job = engine->open_job();
  if (!job) return failed(job.error());
  auto session = job->session("classifier");
  if (!session) return failed(session.error());
  std::vector<float> pixels(3 * 48 * 192);
  auto input = rung::TensorData::view<float>("x", RUNG_FLOAT32, {1, 3, 48, 192}, pixels);
  if (!input) return failed(input.error());
  std::vector<rung::TensorData> inputs;
  inputs.push_back(std::move(*input));
  auto outputs = session->run(inputs);
  if (!outputs) return failed(outputs.error());
  std::printf("engine consumer: %s ran on %s as %s, %zu output(s)\n", session->model_name().c_str(), session->rung().c_str(),
              session->model_id().c_str(), outputs->size());
  return 0;
}
