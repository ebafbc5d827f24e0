#include "jobs/benchmark.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "jobs/compile.h"
#include "jobs/measure.h"
#include "jobs/target_session.h"
#include "os/progress_file.h"
#include "os/this_process.h"
#include "runtime/clean_error.h"
#include "session/inputs.h"
#include "session/placement.h"
#include "session/tensor_file.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;


// Recorded tensors must have the model's rank and fixed dimensions: a wrong
// shape is the caller's input error, said before ONNX Runtime says it obscurely.
Status check_shapes(const ModelIo& io, const std::vector<Tensor>& inputs) {
  for (std::size_t i = 0; i < inputs.size() && i < io.inputs.size(); ++i) {
    const auto& want = io.inputs[i].shape;
    const auto& got = inputs[i].shape;
    bool ok = want.size() == got.size();
    for (std::size_t a = 0; ok && a < want.size(); ++a) ok = want[a] < 0 || want[a] == got[a];
    if (!ok) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("input '{}' is {}, the model wants {} (-1: any size)", inputs[i].name,
                                                            shape_string(got), shape_string(want))};
    }
  }
  return {};
}

// Zeros, and empty strings for a string input.
void zero_generated(std::vector<Tensor>& inputs, const InputSpec& spec) {
  for (auto& t : inputs) {
    if (spec.values.count(t.name) != 0) continue;
    std::fill(t.bytes.begin(), t.bytes.end(), std::byte{0});
    for (auto& s : t.strings) s.clear();
  }
}

std::string provider_version_of(OrtProcess& process, const RungSpec& rung) {
  if (rung.append != AppendMethod::kPluginDevice) return process.build().version;  // built into the runtime build
  auto names = process.plugin_ep_names(path_from_utf8(rung.plugin_library));
  if (!names) return {};
  try {
    for (const auto& d : process.env().GetEpDevices()) {
      if (std::find(names->begin(), names->end(), std::string(d.EpName())) == names->end()) continue;
      if (const char* v = d.EpMetadata().GetValue("version"); v != nullptr) return v;
    }
  } catch (const Ort::Exception&) {
  }
  return {};
}

// The same inputs through OrtApi::Run and nothing else: values created once,
// names held, outputs released. What an application calling ONNX Runtime
// directly pays; the difference to run_session is rung's overhead.
class BareLoop {
 public:
  BareLoop(PreparedSession& prepared, const std::vector<Tensor>& inputs)
      : session_(prepared.session) {
    for (const auto& t : inputs) {
      values_.push_back(tensor_value(t));
      raw_inputs_.push_back(values_.back());
      in_names_.push_back(t.name.c_str());
    }
    for (const auto& o : prepared.io.outputs) out_names_.push_back(o.name.c_str());
    outputs_.resize(out_names_.size(), nullptr);
  }

  // Milliseconds for one run, or a negative number when it failed.
  double run_once() {
    const OrtApi& api = Ort::GetApi();
    auto t0 = Clock::now();
    OrtStatus* status = api.Run(session_, nullptr, in_names_.data(), raw_inputs_.data(), raw_inputs_.size(), out_names_.data(),
                                out_names_.size(), outputs_.data());
    double ms = ms_since(t0);
    for (auto*& v : outputs_) {
      if (v != nullptr) api.ReleaseValue(v);
      v = nullptr;
    }
    if (status != nullptr) {
      api.ReleaseStatus(status);
      return -1;
    }
    return ms;
  }

 private:
  OrtSession* session_;
  std::vector<Ort::Value> values_;
  std::vector<const OrtValue*> raw_inputs_;
  std::vector<const char*> in_names_, out_names_;
  std::vector<OrtValue*> outputs_;
};

struct Built {
  Ort::Session session{nullptr};
  fs::path file;  // what the session loaded: the model, or the engine compiled from it
};

SessionSettings bench_settings(const BenchJob& job) {
  SessionSettings settings = session_settings(job.target);
  settings.provider.fp16 = job.fp16;
  return settings;
}

// Compiles the engine into `engine` in this process (from the compile-ready
// rewrite kept at `rewritten` when the model needs one); says how it went.
std::string compile_engine(const BenchJob& job, const fs::path& engine, const fs::path& rewritten) {
  CompileJob cj;
  cj.target = job.target;
  cj.output = job.engine_dir / "engine.onnx.tmp";
  cj.fp16 = job.fp16;
  cj.provider_cache_dir = job.engine_dir / "provider";
  cj.rewritten = rewritten;
  cj.inputs = job.inputs;
  cj.seed = job.seed;
  std::error_code ec;
  fs::create_directories(cj.provider_cache_dir, ec);
  auto compiled = run_compile_job(cj);
  if (!compiled.ok) return "no engine cache: compiling an engine failed: " + clean_error(compiled.error);
  fs::rename(cj.output, engine, ec);
  return fmt::format("engine compiled through ONNX Runtime's compile API in {:.1f} ms ({} bytes)", compiled.ms, fs::file_size(engine, ec));
}

// Builds the session to measure. A compiling rung builds cold from the f32
// file, compiles its engine into engine_dir, then builds again from the engine:
// the two build times are what a first launch and every later launch pay.
Result<Built> build_session(OrtProcess& process, const BenchJob& job, BenchJobResult& r) {
  const SessionSettings settings = bench_settings(job);
  const fs::path& model = job.target.model;
  auto timed_open = [&](const fs::path& file, std::optional<double>& ms) -> Result<Ort::Session> {
    auto t0 = Clock::now();
    auto s = open_session(process, file, settings);
    ms = ms_since(t0);
    return s;
  };
  if (!job.target.rung.compiles_engines || job.engine_dir.empty()) {
    auto s = timed_open(model, r.build_cold_ms);
    if (!s) return s.error();
    r.engine_note = job.target.rung.compiles_engines ? "no engine cache directory given" : "this rung compiles no engine";
    return Built{std::move(*s), model};
  }
  const fs::path engine = job.engine_dir / "engine.onnx";
  const fs::path rewritten = job.engine_dir / "rewritten.onnx";
  std::error_code ec;
  fs::create_directories(job.engine_dir, ec);
  if (job.cold || !fs::exists(engine, ec)) {
    fs::remove(engine, ec);
    {
      auto cold = timed_open(model, r.build_cold_ms);
      if (!cold) return cold.error();
    }  // the cold session goes before the engine's is built: one session's memory at a time
    r.engine_note = compile_engine(job, engine, rewritten);
  } else {
    r.engine_note = "engine compiled by an earlier round";
  }
  if (auto rewrite = read_rewrite_note(rewritten); !rewrite.empty() && fs::exists(engine, ec)) {
    r.engine_note += fmt::format(", built from a rewritten graph ({})", rewrite);
  }
  if (fs::exists(engine, ec)) {
    auto cached = timed_open(engine, r.build_cached_ms);
    if (cached) return Built{std::move(*cached), engine};
    r.build_cached_ms.reset();
    r.engine_note += "; the engine did not load: " + clean_error(cached.error().message);
  }
  std::optional<double> again;
  auto s = timed_open(model, job.cold ? again : r.build_cold_ms);
  if (!s) return s.error();
  return Built{std::move(*s), model};
}

void profile_one_run(OrtProcess& process, PreparedSession& timed, const BenchJob& job, const fs::path& file,
                     const std::vector<Tensor>& inputs, BenchJobResult& r) {
  auto placement = profile_placement(process, timed, file, bench_settings(job), inputs, job.outputs_dir.parent_path() / "profile");
  if (!placement) {
    r.evidence.push_back(placement.error().message);
    return;
  }
  r.placement = *placement;
  r.evidence.push_back(placement->providers.empty() ? "ONNX Runtime's profile of one run names no node"
                                                    : "ONNX Runtime's profile of one run: " + placement->describe_all());
}

// The inputs the job asks for, checked against the model; said in r.inputs_described.
Result<std::vector<Tensor>> bench_inputs(const BenchJob& job, const ModelIo& io, BenchJobResult& r) {
  auto inputs = make_inputs(io, job.inputs, job.seed);
  if (!inputs) return inputs.error();
  RUNG_RETURN_IF_ERROR(check_shapes(io, *inputs));
  if (job.zero_inputs) zero_generated(*inputs, job.inputs);
  r.inputs_described = describe_inputs(*inputs, job.inputs);
  if (job.zero_inputs) {
    for (std::size_t p; (p = r.inputs_described.find("(random)")) != std::string::npos;) r.inputs_described.replace(p, 8, "(zeros)");
  }
  return inputs;
}

// The timed runs (by count, or until job.duration_s is spent), each beside a
// bare run when asked. Returns the last run's outputs.
Result<std::vector<Tensor>> timed_runs(const BenchJob& job, PreparedSession& prepared, const std::vector<Tensor>& inputs,
                                       BenchJobResult& r) {
  std::optional<BareLoop> bare;
  if (job.compare_bare) bare.emplace(prepared, inputs);
  auto bare_run = [&]() -> Status {
    const double ms = bare->run_once();
    if (ms < 0) return Error{ErrorCode::kRuntime, "the bare OrtApi::Run loop failed"};
    r.bare_run_ms.push_back(ms);
    return {};
  };
  ProgressFile progress(job.progress_file);
  const bool by_time = job.duration_s > 0;
  const int total = by_time ? 0 : job.runs;
  const auto loop_start = Clock::now();
  const auto budget = std::chrono::duration<double>(job.duration_s);
  constexpr int kMaxRuns = 1'000'000;  // bounds memory in --duration mode on a microsecond model
  std::vector<Tensor> outputs;
  for (int i = 0; by_time ? (i == 0 || (Clock::now() - loop_start < budget && i < kMaxRuns)) : i < job.runs; ++i) {
    // With a bare run beside it, alternate which goes first so neither always meets a warmer cache.
    if (bare && i % 2 == 1) {
      RUNG_RETURN_IF_ERROR(bare_run());
    }
    const auto t0 = Clock::now();
    auto again = run_session(prepared, inputs);
    r.run_ms.push_back(ms_since(t0));
    if (!again) return again.error();
    outputs = std::move(*again);
    if (bare && i % 2 == 0) {
      RUNG_RETURN_IF_ERROR(bare_run());
    }
    progress.update(i + 1, total);
  }
  progress.update(static_cast<int>(r.run_ms.size()), total, true);
  return outputs;
}

}  // namespace

BenchJobResult run_bench_job(const BenchJob& job) {
  BenchJobResult r;
  auto fail = [&](const char* stage, const std::string& error) {
    r.ok = false;
    r.stage = stage;
    r.error = clean_error(error);
    return r;
  };
  if (job.runs < 1 && job.duration_s <= 0) return fail("job", "a bench job needs runs >= 1 or a positive duration");
  auto process = install_runtime(job.target);
  if (!process) return fail("runtime", process.error().message);
  r.provider_version = provider_version_of(**process, job.target.rung);

  auto built = build_session(**process, job, r);
  if (!built) return fail("build", built.error().message);
  if (!r.engine_note.empty()) r.evidence.push_back(r.engine_note);
  fs::path loaded = built->file;
  auto prepared = prepare_session(std::move(built->session));
  if (!prepared) return fail("build", prepared.error().message);

  auto inputs = bench_inputs(job, prepared->io, r);
  if (!inputs) return fail("inputs", inputs.error().message);

  auto t0 = Clock::now();
  auto first = run_session(*prepared, *inputs);
  r.first_run_ms = ms_since(t0);
  if (!first) return fail("run", first.error().message);
  for (int i = 0; i < job.warmup; ++i) {
    if (auto w = run_session(*prepared, *inputs); !w) return fail("run", w.error().message);
  }
  auto outputs = timed_runs(job, *prepared, *inputs, r);
  if (!outputs) return fail("run", outputs.error().message);

  r.peak_rss_kb = peak_resident_kib();

  if (!job.outputs_dir.empty()) {
    if (auto s = write_output_directory(*outputs, job.outputs_dir); !s) return fail("run", s.error().message);
  }
  if (job.profile) profile_one_run(**process, *prepared, job, loaded, *inputs, r);
  r.ok = true;
  return r;
}

nlohmann::json bench_job_entry(const nlohmann::json& job, LineChannel*) { return run_bench_job(job.get<BenchJob>()); }

}  // namespace rung
