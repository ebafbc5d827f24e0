// The warm decision: a launch whose probe cache is valid. With ~20 MB of
// registered models the target is under 5 ms, which is only possible because an
// unchanged model (path, size, mtime, inode) is never hashed again.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "os/file_hash.h"
#include "rung/probe.h"

namespace fs = std::filesystem;

namespace {

// `all_builds`: search every fetched build (1.30.0, 1.29, 1.28.2), as a launch beside build/rung does; else 1.30.0 alone.
rung::ProbeOptions options(const fs::path& cache, bool all_builds = false) {
  const fs::path models = fs::path(RUNG_BENCH_DEPS_DIR) / "models";
  rung::ProbeOptions o;
  o.cache_dir = cache;
  o.worker = RUNG_BENCH_WORKER;
  o.runtimes.explicit_dir = fs::path(RUNG_BENCH_DEPS_DIR) / "runtimes" / (all_builds ? "" : "onnxruntime-1.30.0");
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  // 4.7 + 10.8 + 0.6 + 2.3 + 1.3 = 19.7 MB registered.
  o.models = {{"ppocr_det_v4", models / "ppocr" / "ch_PP-OCRv4_det_infer.onnx", {}},
              {"ppocr_rec_v4", models / "ppocr" / "ch_PP-OCRv4_rec_infer.onnx", {}},
              {"ppocr_cls", models / "ppocr" / "ch_ppocr_mobile_v2.0_cls_infer.onnx", {}},
              {"silero_vad", models / "silero-vad" / "silero_vad.onnx", {}},
              {"silero_vad_half", models / "silero-vad" / "silero_vad_half.onnx", {}}};
  return o;
}

// Arg 0: one build searched; 1: the three fetched builds (a warm decision opens the cached one alone).
void BM_WarmDecision(benchmark::State& state) {
  fs::path cache = fs::temp_directory_path() / "rung-bench-decision";
  fs::remove_all(cache);
  auto o = options(cache, state.range(0) == 1);
  auto cold = rung::run_probe(o);  // probes, hashes, writes the cache
  if (!cold) {
    state.SkipWithError(cold.error().message.c_str());
    return;
  }
  std::uintmax_t bytes = 0;
  for (const auto& m : o.models) bytes += fs::file_size(m.path);
  for (auto _ : state) {
    auto warm = rung::run_probe(o);
    if (!warm || !warm->from_cache) {
      state.SkipWithError("the warm decision missed the cache");
      return;
    }
    benchmark::DoNotOptimize(warm->chosen);
  }
  state.counters["registered_MB"] = static_cast<double>(bytes) / 1e6;
  fs::remove_all(cache);
}
BENCHMARK(BM_WarmDecision)->ArgName("all_builds")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// For scale: what the warm decision would cost if it re-hashed the models.
void BM_HashRegisteredModels(benchmark::State& state) {
  auto o = options(fs::temp_directory_path() / "unused");
  for (auto _ : state) {
    for (const auto& m : o.models) benchmark::DoNotOptimize(rung::sha256_of_file(m.path));
  }
}
BENCHMARK(BM_HashRegisteredModels)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
