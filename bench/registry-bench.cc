// The registry at fleet scale: importing 10 000 bench measurements (one record
// per model and device, as devices write them: 20 models × 500 devices, three
// rungs each) in one `rung registry import`, and listing the fleet view over
// them, on SQLite and on PostgreSQL (a throwaway server, tests/postgres_server.h).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <filesystem>

#include "postgres_server.h"
#include "rung/bench.h"
#include "rung/bench_record.h"
#include "rung/registry.h"
#include "test_support.h"
#include "os/library_files.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

constexpr int kModels = 20, kDevices = 500;  // 10 000 measurements

const std::vector<EvidenceFile>& fleet_records() {
  static const std::vector<EvidenceFile> records = [] {
    std::vector<EvidenceFile> out;
    for (int d = 0; d < kDevices; ++d) {
      BenchReport rep;
      rep.date = fmt::format("2026-11-{:02}T{:02}:00:00Z", 1 + d % 28, d % 24);
      rep.hostname = fmt::format("device-{}", d);
      rep.os = "Linux 6.1 x86_64";
      rep.cpu = "Test CPU";
      rep.logical_cpus = 8;
      rep.hardware_identity = fmt::format("linux; gpu 10de:{:04x} NVIDIA; nvidia driver 550.{}; cpu Test CPU", 0x2600 + d % 40, d);
      rep.runtime_version = d % 3 == 0 ? "1.29.0" : "1.30.0";
      rep.runtime_library = "/opt/ort/" + rung::library_file_name("onnxruntime");
      rep.api_version = 22;
      rep.inputs_mode = "random";
      for (int m = 0; m < kModels; ++m) {
        BenchModelReport model;
        model.name = fmt::format("model_{:02}", m);
        model.path = model.name + ".onnx";
        model.sha256 = fmt::format("{:064x}", m + 1);
        model.stable_sha256 = fmt::format("{:064x}", m + 1001);
        model.size_bytes = 1000;
        model.form = "f32";
        model.model_id = model.name;
        model.opset = 17;
        model.nodes = 100;
        for (const char* rung : {"cpu", "cuda", "tensorrt"}) {
          BenchRow row;
          row.rung = rung;
          row.display = rung;
          row.provider = rung;
          row.form = "f32";
          row.model_id = model.name;
          row.ok = true;
          const double p50 = 1.0 + m + d * 0.001;
          row.latency = {30, p50 * 0.9, p50, p50 * 1.1, p50 * 1.2, p50 * 1.3, p50, 0.1, 0.05};
          row.round_p50_ms = {p50};
          row.match = rung == std::string("cpu") ? OutputMatch::kReference : OutputMatch::kMatch;
          model.rows.push_back(row);
        }
        out.push_back({fmt::format("{}-{}.json", model.name, d), bench_record_json(rep, model, "rung bench")});
      }
    }
    return out;
  }();
  return records;
}

// A fresh, empty registry: a new file, or a new database on the throwaway server.
std::string fresh_registry(test::Db db, benchmark::State& state) {
  struct Scratch {
    fs::path dir = test::make_temp_dir("rung-registry-bench");
    ~Scratch() { fs::remove_all(dir); }
  };
  static const Scratch scratch;
  std::string skip;
  std::string url = test::fresh_registry(db, scratch.dir, skip);
  if (url.empty()) state.SkipWithError(("PostgreSQL cannot start here: " + skip).c_str());
  return url;
}

void BM_Import10000Measurements(benchmark::State& state, test::Db backend) {
  const auto& records = fleet_records();
  for (auto _ : state) {
    state.PauseTiming();
    const std::string url = fresh_registry(backend, state);
    if (url.empty()) return;
    auto reg = Registry::open(url);
    state.ResumeTiming();
    auto imported = reg->import_records(records);
    if (!imported || imported->measurements_new != kModels * kDevices) {
      state.SkipWithError(imported ? "not every measurement was new" : imported.error().message.c_str());
      return;
    }
  }
  state.counters["measurements"] = kModels * kDevices;
}

void BM_FleetView(benchmark::State& state, test::Db backend) {
  const std::string url = fresh_registry(backend, state);
  if (url.empty()) return;
  auto reg = Registry::open(url);
  if (!reg || !reg->import_records(fleet_records())) {
    state.SkipWithError("the registry could not be filled");
    return;
  }
  std::size_t cells = 0;
  for (auto _ : state) {
    auto fleet = reg->fleet();
    if (!fleet) {
      state.SkipWithError(fleet.error().message.c_str());
      return;
    }
    cells = 0;
    for (const auto& m : *fleet) {
      for (const auto& d : m.devices) cells += d.rungs.size();
    }
  }
  state.counters["cells"] = static_cast<double>(cells);
}

BENCHMARK_CAPTURE(BM_Import10000Measurements, sqlite, test::Db::kSqlite)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Import10000Measurements, postgresql, test::Db::kPostgresql)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_FleetView, sqlite, test::Db::kSqlite)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_FleetView, postgresql, test::Db::kPostgresql)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace rung

BENCHMARK_MAIN();
