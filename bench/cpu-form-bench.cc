// The CPU rung's derived form: a session built from ONNX Runtime's saved,
// optimised graph (ORT format) against one built from the .onnx file. Both in
// one run, so the ratio holds on a noisy machine.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "rung/ladder.h"
#include "rung/runtime.h"
#include "session/session.h"
#include "runtime/search.h"

namespace fs = std::filesystem;

namespace {

rung::OrtProcess* process() {
  static rung::OrtProcess* p = [] {
    auto build = rung::load_runtime_build(rung::library_in(fs::path(RUNG_BENCH_DEPS_DIR) / "runtimes" / "onnxruntime-1.30.0").value_or("/no-1.30.0-build-fetched"));
    if (!build) return static_cast<rung::OrtProcess*>(nullptr);
    auto installed = rung::OrtProcess::install(*build);
    return installed ? *installed : nullptr;
  }();
  return p;
}

const char* const kModels[] = {"ch_PP-OCRv4_det_infer", "ch_PP-OCRv4_rec_infer"};

fs::path model(int i) { return fs::path(RUNG_BENCH_DEPS_DIR) / "models" / "ppocr" / (std::string(kModels[i]) + ".onnx"); }

fs::path ort_form(int i) {
  fs::path out = fs::temp_directory_path() / (std::string("rung-bench-") + kModels[i] + ".ort");
  if (!fs::exists(out)) {
    rung::SessionSettings s;
    s.rung = *rung::find_rung("cpu");
    s.optimized_model_path = out;
    (void)rung::open_session(*process(), model(i), s);
  }
  return out;
}

void open(benchmark::State& state, const fs::path& file) {
  if (process() == nullptr) {
    state.SkipWithError("ONNX Runtime 1.30.0 not found; run tools/fetch-deps.sh");
    return;
  }
  rung::SessionSettings s;
  s.rung = *rung::find_rung("cpu");
  for (auto _ : state) {
    auto session = rung::open_session(*process(), file, s);
    if (!session) {
      state.SkipWithError(session.error().message.c_str());
      return;
    }
  }
}

void BM_OpenFromOnnx(benchmark::State& state) { open(state, model(static_cast<int>(state.range(0)))); }
void BM_OpenFromOptimisedOrt(benchmark::State& state) { open(state, ort_form(static_cast<int>(state.range(0)))); }

// Arg 0: the detector (4.7 MB); arg 1: the recogniser (10.8 MB).
BENCHMARK(BM_OpenFromOnnx)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(15);
BENCHMARK(BM_OpenFromOptimisedOrt)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(15);

}  // namespace

BENCHMARK_MAIN();
