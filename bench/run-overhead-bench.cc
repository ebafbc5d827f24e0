// What rung adds to one inference: run_session (the path `rung bench` and the
// probe time) against the bare OrtApi::Run call on the same session and inputs,
// on a single-Add model (the overhead alone) and on the PP-OCRv4 detector (the
// overhead beside real work). Target: under 2 µs added per call.
//
// Three variants per model:
//   BareCApi          OrtApi::Run with values created once and names held.
//   RunSession        run_session(PreparedSession&): names described once.
//   RunSessionDescribe run_session(Ort::Session&): describes the session (names,
//                     type infos) on every call — what run_session cost before
//                     PreparedSession; kept to show why it exists.
//   EngineSessionRun  the engine's Session::run (rung/engine.h): what an
//                     application calls, input checks included.
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "rung/engine_core.h"
#include "session/inputs.h"
#include "session/session.h"
#include "runtime/search.h"

namespace fs = std::filesystem;

namespace {

const fs::path kDeps = RUNG_BENCH_DEPS_DIR;

// y = x + w on a [1, 16] float tensor: ONNX Runtime's own per-call cost is all there is.
fs::path tiny_add_model() {
  fs::path file = fs::temp_directory_path() / "rung-overhead-add.onnx";
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("add");
  auto tensor_type = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(16);
  };
  tensor_type(g->add_input(), "x");
  tensor_type(g->add_output(), "y");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1);
  w->add_dims(16);
  for (int i = 0; i < 16; ++i) w->add_float_data(0.5f);
  auto* n = g->add_node();
  n->set_op_type("Add");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  m.SerializeToOstream(&out);
  return file;
}

struct Fixture {
  std::optional<rung::PreparedSession> prepared;
  std::vector<rung::Tensor> inputs;
  std::string error;
  // The bare loop's state.
  std::unique_ptr<Ort::MemoryInfo> mem;
  std::vector<Ort::Value> values;
  std::vector<const OrtValue*> raw;
  std::vector<const char*> in_names, out_names;
};

Fixture& fixture(const std::string& which) {
  static std::map<std::string, Fixture> fixtures;
  auto it = fixtures.find(which);
  if (it != fixtures.end()) return it->second;
  Fixture& f = fixtures[which];
  auto build = rung::load_runtime_build(rung::library_in(kDeps / "runtimes" / "onnxruntime-1.30.0").value_or("/no-1.30.0-build-fetched"));
  if (!build) {
    f.error = build.error().message;
    return f;
  }
  auto process = rung::OrtProcess::install(*build);
  if (!process) {
    f.error = process.error().message;
    return f;
  }
  rung::SessionSettings settings;
  settings.rung = *rung::find_rung("cpu");
  rung::InputSpec spec;
  fs::path model;
  if (which == "add") {
    model = tiny_add_model();
    settings.intra_op_threads = 1;
  } else {
    model = kDeps / "models" / "ppocr" / "ch_PP-OCRv4_det_infer.onnx";
    settings.intra_op_threads = 1;  // one thread: the least noise on a shared machine
    spec.dims = {{"x:0", 1}, {"x:2", 320}, {"x:3", 320}};
  }
  auto session = rung::open_session(**process, model, settings);
  if (!session) {
    f.error = session.error().message;
    return f;
  }
  auto prepared = rung::prepare_session(std::move(*session));
  if (!prepared) {
    f.error = prepared.error().message;
    return f;
  }
  f.prepared.emplace(std::move(*prepared));
  auto inputs = rung::make_inputs(f.prepared->io, spec, 1);
  if (!inputs) {
    f.error = inputs.error().message;
    return f;
  }
  f.inputs = std::move(*inputs);
  f.mem = std::make_unique<Ort::MemoryInfo>(Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault));
  for (auto& t : f.inputs) {
    f.values.push_back(Ort::Value::CreateTensor(*f.mem, t.bytes.data(), t.bytes.size(), t.shape.data(), t.shape.size(),
                                                rung::ort_element_type(t.type)));
    f.raw.push_back(f.values.back());
    f.in_names.push_back(t.name.c_str());
  }
  for (const auto& o : f.prepared->io.outputs) f.out_names.push_back(o.name.c_str());
  return f;
}

void BM_BareCApi(benchmark::State& state, const std::string& which) {
  Fixture& f = fixture(which);
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  const OrtApi& api = Ort::GetApi();
  std::vector<OrtValue*> outputs(f.out_names.size(), nullptr);
  OrtSession* session = f.prepared->session;
  for (auto _ : state) {
    OrtStatus* s = api.Run(session, nullptr, f.in_names.data(), f.raw.data(), f.raw.size(), f.out_names.data(), f.out_names.size(),
                           outputs.data());
    if (s != nullptr) {
      api.ReleaseStatus(s);
      return state.SkipWithError("OrtApi::Run failed");
    }
    benchmark::DoNotOptimize(outputs[0]);
    for (auto*& v : outputs) {
      api.ReleaseValue(v);
      v = nullptr;
    }
  }
}

void BM_RunSession(benchmark::State& state, const std::string& which) {
  Fixture& f = fixture(which);
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  for (auto _ : state) {
    auto out = rung::run_session(*f.prepared, f.inputs);
    if (!out) return state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out->front().bytes.data());
  }
}

void BM_RunSessionDescribe(benchmark::State& state, const std::string& which) {
  Fixture& f = fixture(which);
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  for (auto _ : state) {
    auto out = rung::run_session(f.prepared->session, f.inputs);
    if (!out) return state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out->front().bytes.data());
  }
}

// The engine on the same model and inputs: started once, settled (its probe
// done), one job, one session.
struct EngineFixture {
  std::shared_ptr<rung::core::Engine> engine;
  std::unique_ptr<rung::core::Job> job;
  rung::core::Session* session = nullptr;
  std::string error;
};

EngineFixture& engine_fixture(const std::string& which) {
  static std::map<std::string, EngineFixture> fixtures;
  auto it = fixtures.find(which);
  if (it != fixtures.end()) return it->second;
  EngineFixture& e = fixtures[which];
  Fixture& f = fixture(which);  // installs the same runtime build in this process
  if (!f.error.empty()) {
    e.error = f.error;
    return e;
  }
  rung::core::EngineOptions o;
  o.cache_dir = fs::temp_directory_path() / ("rung-overhead-engine-" + which);
  fs::remove_all(o.cache_dir);
  rung::ModelRegistration m;
  m.name = which;
  if (which == "add") {
    m.f32 = fs::temp_directory_path() / "rung-overhead-add.onnx";
    o.inference_threads = 1;
  } else {
    m.f32 = kDeps / "models" / "ppocr" / "ch_PP-OCRv4_det_infer.onnx";
    m.inputs.dims = {{"x:0", 1}, {"x:2", 320}, {"x:3", 320}};
    o.inference_threads = 1;
  }
  o.models = {m};
  o.runtimes.explicit_dir = kDeps / "runtimes" / "onnxruntime-1.30.0";
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  o.worker = RUNG_BENCH_WORKER;
  auto engine = rung::core::Engine::start(o);
  if (!engine) {
    e.error = engine.error().message;
    return e;
  }
  e.engine = *engine;
  e.engine->wait_until_settled();
  auto job = e.engine->open_job();
  if (!job) {
    e.error = job.error().message;
    return e;
  }
  e.job = std::move(*job);
  auto session = e.job->session(which);
  if (!session) {
    e.error = session.error().message;
    return e;
  }
  e.session = *session;
  return e;
}

void BM_EngineSessionRun(benchmark::State& state, const std::string& which) {
  EngineFixture& e = engine_fixture(which);
  if (!e.error.empty()) return state.SkipWithError(e.error.c_str());
  Fixture& f = fixture(which);
  state.SetLabel("on " + e.session->rung());
  for (auto _ : state) {
    auto out = e.session->run(f.inputs);
    if (!out) return state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out->front().bytes.data());
  }
}

// Run with --benchmark_enable_random_interleaving=true --benchmark_repetitions=N so drift hits every variant alike.
BENCHMARK_CAPTURE(BM_BareCApi, add, std::string("add"))->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_RunSession, add, std::string("add"))->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_RunSessionDescribe, add, std::string("add"))->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_EngineSessionRun, add, std::string("add"))->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK_CAPTURE(BM_BareCApi, ppocr_det_v4, std::string("det"))->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK_CAPTURE(BM_RunSession, ppocr_det_v4, std::string("det"))->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK_CAPTURE(BM_RunSessionDescribe, ppocr_det_v4, std::string("det"))->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK_CAPTURE(BM_EngineSessionRun, ppocr_det_v4, std::string("det"))->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
