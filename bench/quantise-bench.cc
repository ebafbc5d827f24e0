// rung quantise's two calibration targets, each measured as a ratio in one run:
//  - cost: calibration over N detector inputs (every activation exposed and
//    folded into statistics) against plain inference of the same inputs
//    (target: at most 2x);
//  - memory: the peak resident memory of a process calibrating over 200
//    inputs against one calibrating over 20 (target: within 10%), each in a
//    fresh child process, the inputs all the same size so only their number differs.
// The inputs are the detector's calibration pages (tools/make-quantise-sets.py),
// from RUNG_QUANTISE_DATA (default ~/.cache/rung/data/ocr).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "graph/model_file.h"
#include "graph/onnx_file.h"
#include "quantise/opset_upgrade.h"
#include "os/child_process.h"
#include "os/read_file.h"
#include "os/this_process.h"
#include "os/worker_location.h"
#include "os/work_dir.h"
#include "parity/gate_file.h"
#include "parity/inputs.h"
#include "quantise/calibration.h"
#include "quantise/qdq.h"
#include "rung/runtime.h"
#include "session/session.h"
#include "runtime/search.h"

namespace fs = std::filesystem;
using namespace rung;

namespace {

fs::path detector() { return fs::path(RUNG_BENCH_DEPS_DIR) / "models" / "ppocr" / "ch_PP-OCRv4_det_infer.onnx"; }
fs::path pages() {
  const char* d = std::getenv("RUNG_QUANTISE_DATA");
  return (d ? fs::path(d) : fs::path(RUNG_BENCH_DEPS_DIR) / "data" / "ocr") / "calibration" / "det";
}

OrtProcess* process() {
  static OrtProcess* p = [] {
    auto build = load_runtime_build(library_in(fs::path(RUNG_BENCH_DEPS_DIR) / "runtimes" / "onnxruntime-1.30.0").value_or("/no-1.30.0-build-fetched"));
    if (!build) return static_cast<OrtProcess*>(nullptr);
    auto installed = OrtProcess::install(*build);
    return installed ? *installed : nullptr;
  }();
  return p;
}

// The detector's gate preprocessing; `fixed` stretches every page to one size.
InputPlan plan(bool fixed) {
  const std::string text = fixed ? R"({"fit": "resize", "width": 640, "height": 448, "channels": "BGR",
                                       "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]})"
                                 : R"({"fit": "limit", "max_side": 960, "multiple": 32, "channels": "BGR",
                                       "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]})";
  return {*ImagePreprocess::from_json_text(text), "", {}, 0};
}

// `count` items, cycling through the pages when there are fewer.
Result<std::vector<InputItem>> items(std::size_t count) {
  auto listed = InputItems::listed(pages());
  if (!listed) return listed.error();
  std::vector<InputItem> out;
  for (std::size_t i = 0; i < count; ++i) {
    InputItem item = listed->at(i % listed->size());
    item.index = i;
    out.push_back(std::move(item));
  }
  return out;
}

struct Prepared {
  onnx::ModelProto model;
  QdqPlan plan;
};

Result<Prepared> prepare() {
  Prepared p;
  auto read = read_onnx_model(detector());
  if (!read) return read.error();
  p.model = std::move(*read);
  name_unnamed_nodes(*p.model.mutable_graph());
  if (auto u = upgrade_opset(p.model, 17); !u) return u.error();
  auto plan = plan_qdq(p.model, {});
  if (!plan) return plan.error();
  p.plan = std::move(*plan);
  return p;
}

Result<Calibration> calibrate_over(const Prepared& p, std::size_t count, const Calibrator& c, bool fixed, const fs::path& work) {
  auto list = items(count);
  if (!list) return list.error();
  CalibrationOptions o;
  o.tensors = p.plan.calibrated();
  o.items = std::move(*list);
  o.plan = plan(fixed);
  o.calibrator = c;
  o.work_dir = work;
  return calibrate(*process(), p.model, o);
}

// Plain inference of the same inputs, paying what calibration pays besides
// its statistics: the session, decoding and preprocessing each input.
Result<double> plain_inference(std::size_t count) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  SessionSettings s;
  s.rung = *find_rung("cpu");
  auto session = open_session(*process(), detector(), s);
  if (!session) return session.error();
  auto prepared = prepare_session(std::move(*session));
  if (!prepared) return prepared.error();
  auto list = items(count);
  if (!list) return list.error();
  const InputPlan p = plan(false);
  for (const auto& item : *list) {
    auto inputs = calibration_tensors(item, prepared->io, p);
    if (!inputs) return inputs.error();
    auto out = run_session(*prepared, *inputs);
    if (!out) return out.error();
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Seconds of CPU this process spent, all threads: on a shared machine, what each side costs.
double cpu_seconds() { return this_process_cpu_seconds(); }

void cost(benchmark::State& state, const char* calibrator) {
  if (process() == nullptr) return state.SkipWithError("ONNX Runtime 1.30.0 not found; run tools/fetch-deps.sh");
  if (!fs::is_directory(pages())) return state.SkipWithError("no calibration pages: run tools/make-quantise-sets.py (see docs/quantise.md)");
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  auto prepared = prepare();
  if (!prepared) return state.SkipWithError(prepared.error().message.c_str());
  auto work = WorkDir::create("rung-quantise-bench");
  const Calibrator c = *Calibrator::parse(calibrator);
  for (auto _ : state) {
    const double cpu0 = cpu_seconds();
    auto plain = plain_inference(n);
    if (!plain) return state.SkipWithError(plain.error().message.c_str());
    const double cpu1 = cpu_seconds();
    auto cal = calibrate_over(*prepared, n, c, false, work->path());
    if (!cal) return state.SkipWithError(cal.error().message.c_str());
    const double cpu2 = cpu_seconds();
    state.counters["plain_s"] = *plain;
    state.counters["calibration_s"] = cal->seconds;
    state.counters["runs_s"] = cal->run_seconds;
    state.counters["statistics_s"] = cal->statistics_seconds;
    state.counters["ratio"] = cal->seconds / *plain;
    state.counters["plain_cpu_s"] = cpu1 - cpu0;
    state.counters["calibration_cpu_s"] = cpu2 - cpu1;
    state.counters["cpu_ratio"] = (cpu2 - cpu1) / (cpu1 - cpu0);
    state.counters["values_M"] = static_cast<double>(cal->values) / 1e6 / static_cast<double>(n);
  }
}

void BM_CalibrationCost_MinMax(benchmark::State& s) { cost(s, "minmax"); }
void BM_CalibrationCost_Percentile(benchmark::State& s) { cost(s, "percentile=99.999"); }
void BM_CalibrationCost_Entropy(benchmark::State& s) { cost(s, "entropy"); }

// A child calibrating over N inputs prints its peak resident memory, in KiB.
Result<long> child_peak_rss(std::size_t n, const char* calibrator) {
  auto work = WorkDir::create("rung-quantise-bench-child");
  if (!work) return work.error();
  const fs::path out = work->path() / "child.txt";
  auto child = ChildProcess::spawn(executable_dir() / "quantise-bench", {"--child", std::to_string(n), calibrator}, out);
  if (!child) return child.error();
  const ChildExit ended = child->wait(ChildProcess::Clock::time_point::max());
  // The child prints its figure as its last line (a runtime may log before it).
  const std::string said = read_file_tail(out, 4096);
  const auto last = said.find_last_of('\n', said.size() > 1 ? said.size() - 2 : 0);
  const long kib = std::atol(said.c_str() + (last == std::string::npos ? 0 : last + 1));
  if (ended.exit_code != 0 || kib <= 0) return Error{ErrorCode::kRuntime, fmt::format("the child calibrating over {} inputs failed", n)};
  return kib;
}

void memory(benchmark::State& state, const char* calibrator) {
  if (!fs::is_directory(pages())) return state.SkipWithError("no calibration pages: run tools/make-quantise-sets.py (see docs/quantise.md)");
  for (auto _ : state) {
    auto few = child_peak_rss(20, calibrator);
    if (!few) return state.SkipWithError(few.error().message.c_str());
    auto many = child_peak_rss(200, calibrator);
    if (!many) return state.SkipWithError(many.error().message.c_str());
    state.counters["rss_20_MiB"] = static_cast<double>(*few) / 1024;
    state.counters["rss_200_MiB"] = static_cast<double>(*many) / 1024;
    state.counters["ratio"] = static_cast<double>(*many) / static_cast<double>(*few);
  }
}

void BM_PeakRss200Over20_MinMax(benchmark::State& s) { memory(s, "minmax"); }
void BM_PeakRss200Over20_Percentile(benchmark::State& s) { memory(s, "percentile=99.999"); }
void BM_PeakRss200Over20_Entropy(benchmark::State& s) { memory(s, "entropy"); }

int run_child(std::size_t n, const char* calibrator) {
  if (process() == nullptr) return 3;
  auto prepared = prepare();
  auto c = Calibrator::parse(calibrator);
  auto work = WorkDir::create("rung-quantise-bench-child");
  if (!prepared || !c || !work) return 2;
  auto cal = calibrate_over(*prepared, n, *c, true, work->path());
  if (!cal) {
    std::fprintf(stderr, "%s\n", cal.error().message.c_str());
    return 1;
  }
  std::printf("%.0f\n", rung::peak_resident_kib());
  return 0;
}

}  // namespace

BENCHMARK(BM_CalibrationCost_MinMax)->Arg(100)->Arg(20)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_CalibrationCost_Percentile)->Arg(100)->Arg(20)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_CalibrationCost_Entropy)->Arg(100)->Arg(20)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_PeakRss200Over20_MinMax)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_PeakRss200Over20_Percentile)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
BENCHMARK(BM_PeakRss200Over20_Entropy)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--child") return run_child(std::strtoul(argv[2], nullptr, 10), argv[3]);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
