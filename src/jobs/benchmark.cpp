#include "jobs/benchmark.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "jobs/compile.h"
#include "jobs/measure.h"
#include "jobs/profile_placement.h"
#include "os/atomic_file.h"
#include "os/read_file.h"
#include "runtime/clean_error.h"
#include "session/inputs.h"
#include "session/session.h"
#include "session/tensor_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
std::optional<double> optional_of(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

// Runs done so far, for the parent's progress line: written outside the timed
// region and at most every 100 ms, so the measurement does not pay for it.
class ProgressFile {
 public:
  explicit ProgressFile(const fs::path& path) {
    if (!path.empty()) fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  ~ProgressFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ProgressFile(const ProgressFile&) = delete;
  ProgressFile& operator=(const ProgressFile&) = delete;

  void update(int done, int total, bool force = false) {
    if (fd_ < 0) return;
    auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::string line = fmt::format("{} {}\n", done, total);
    line.resize(32, ' ');  // fixed width: a reader never sees the tail of a longer earlier line
    if (::pwrite(fd_, line.data(), line.size(), 0) < 0) return;
  }

 private:
  int fd_ = -1;
  Clock::time_point last_{};
};

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
  auto names = process.plugin_ep_names(rung.plugin_library);
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

// Builds the session to measure. A compiling rung builds cold from the f32
// file, compiles its engine into engine_dir, then builds again from the engine:
// the two build times are what a first launch and every later launch pay.
Result<Built> build_session(OrtProcess& process, const BenchJob& job, BenchJobResult& r) {
  SessionSettings settings;
  settings.rung = job.rung;
  settings.intra_op_threads = job.threads;
  settings.provider.fp16 = job.fp16;
  auto timed_open = [&](const fs::path& file, std::optional<double>& ms) -> Result<Ort::Session> {
    auto t0 = Clock::now();
    auto s = open_session(process, file, settings);
    ms = ms_since(t0);
    return s;
  };
  if (!job.rung.compiles_engines || job.engine_dir.empty()) {
    auto s = timed_open(job.model, r.build_cold_ms);
    if (!s) return s.error();
    r.engine_note = job.rung.compiles_engines ? "no engine cache directory given" : "this rung compiles no engine";
    return Built{std::move(*s), job.model};
  }
  const fs::path engine = job.engine_dir / "engine.onnx";
  const fs::path rewritten = job.engine_dir / "rewritten.onnx";
  std::error_code ec;
  fs::create_directories(job.engine_dir, ec);
  if (job.cold || !fs::exists(engine, ec)) {
    fs::remove(engine, ec);
    {
      auto cold = timed_open(job.model, r.build_cold_ms);
      if (!cold) return cold.error();
    }  // the cold session goes before the engine's is built: one session's memory at a time
    CompileJob cj;
    cj.runtime_library = job.runtime_library;
    cj.allow_writable_runtime = job.allow_writable_runtime;
    cj.model = job.model;
    cj.output = job.engine_dir / "engine.onnx.tmp";
    cj.rung = job.rung;
    cj.fp16 = job.fp16;
    cj.provider_cache_dir = job.engine_dir / "provider";
    cj.rewritten = rewritten;
    cj.inputs = job.inputs;
    cj.seed = job.seed;
    fs::create_directories(cj.provider_cache_dir, ec);
    auto compiled = run_compile_job(cj);
    if (compiled.ok) {
      fs::rename(cj.output, engine, ec);
      r.engine_note = fmt::format("engine compiled through ONNX Runtime's compile API in {:.1f} ms ({} bytes)", compiled.ms,
                                  fs::file_size(engine, ec));
    } else {
      r.engine_note = "no engine cache: compiling an engine failed: " + clean_error(compiled.error);
    }
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
  auto s = timed_open(job.model, job.cold ? again : r.build_cold_ms);
  if (!s) return s.error();
  return Built{std::move(*s), job.model};
}

void profile_one_run(OrtProcess& process, const BenchJob& job, const fs::path& file, const std::vector<Tensor>& inputs,
                     BenchJobResult& r) {
  SessionSettings settings;
  settings.rung = job.rung;
  settings.intra_op_threads = job.threads;
  settings.provider.fp16 = job.fp16;
  fs::path dir = job.outputs_dir.parent_path() / "profile";
  std::error_code ec;
  fs::create_directories(dir, ec);
  settings.profile_prefix = dir / "run";
  auto session = open_session(process, file, settings);
  if (!session) {
    r.evidence.push_back("no placement profile: " + clean_error(session.error().message));
    return;
  }
  auto ran = run_session(*session, inputs);
  try {
    Ort::AllocatorWithDefaultOptions alloc;
    fs::path written = session->EndProfilingAllocated(alloc).get();
    if (!ran) {
      r.evidence.push_back("no placement profile: the profiled run failed: " + clean_error(ran.error().message));
      return;
    }
    r.nodes_by_provider = nodes_by_provider(written);
    std::vector<std::string> parts;
    for (const auto& [p, n] : r.nodes_by_provider) parts.push_back(fmt::format("{} ran {} node{}", p, n, n == 1 ? "" : "s"));
    r.evidence.push_back(parts.empty() ? "ONNX Runtime's profile of one run names no node"
                                       : fmt::format("ONNX Runtime's profile of one run: {}", fmt::join(parts, ", ")));
  } catch (const Ort::Exception& e) {
    r.evidence.push_back(std::string("no placement profile: ") + e.what());
  }
}

}  // namespace

std::string bench_job_to_json(const BenchJob& job) {
  nlohmann::json j = {{"runtime_library", job.runtime_library.string()},
                      {"allow_writable_runtime", job.allow_writable_runtime},
                      {"model_name", job.model_name},
                      {"model", job.model.string()},
                      {"inputs", nlohmann::json::parse(job.inputs.canonical())},
                      {"zero_inputs", job.zero_inputs},
                      {"rung", nlohmann::json::parse(rung_to_json(job.rung))},
                      {"fp16", job.fp16},
                      {"threads", job.threads},
                      {"warmup", job.warmup},
                      {"runs", job.runs},
                      {"duration_s", job.duration_s},
                      {"seed", job.seed},
                      {"outputs_dir", job.outputs_dir.string()},
                      {"engine_dir", job.engine_dir.string()},
                      {"cold", job.cold},
                      {"profile", job.profile},
                      {"compare_bare", job.compare_bare},
                      {"progress_file", job.progress_file.string()}};
  return j.dump(2);
}

Result<BenchJob> bench_job_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    BenchJob job;
    job.runtime_library = j.at("runtime_library").get<std::string>();
    job.allow_writable_runtime = j.at("allow_writable_runtime");
    job.model_name = j.at("model_name");
    job.model = j.at("model").get<std::string>();
    auto spec = InputSpec::from_json_text(j.at("inputs").dump());
    if (!spec) return spec.error();
    job.inputs = *spec;
    job.zero_inputs = j.at("zero_inputs");
    auto rung = rung_from_json(j.at("rung").dump());
    if (!rung) return rung.error();
    job.rung = *rung;
    job.fp16 = j.at("fp16");
    job.threads = j.at("threads");
    job.warmup = j.at("warmup");
    job.runs = j.at("runs");
    job.duration_s = j.at("duration_s");
    job.seed = j.at("seed");
    job.outputs_dir = j.at("outputs_dir").get<std::string>();
    job.engine_dir = j.at("engine_dir").get<std::string>();
    job.cold = j.at("cold");
    job.profile = j.at("profile");
    job.compare_bare = j.at("compare_bare");
    job.progress_file = j.at("progress_file").get<std::string>();
    return job;
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("malformed bench job: {}", e.what())};
  }
}

std::string bench_result_to_json(const BenchJobResult& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [p, n] : r.nodes_by_provider) nodes.push_back({{"provider", p}, {"nodes", n}});
  nlohmann::json j = {{"ok", r.ok},
                      {"stage", r.stage},
                      {"error", r.error},
                      {"inputs", r.inputs_described},
                      {"provider_version", r.provider_version},
                      {"build_cold_ms", optional_json(r.build_cold_ms)},
                      {"build_cached_ms", optional_json(r.build_cached_ms)},
                      {"engine_note", r.engine_note},
                      {"first_run_ms", r.first_run_ms},
                      {"run_ms", r.run_ms},
                      {"bare_run_ms", r.bare_run_ms},
                      {"peak_rss_kb", r.peak_rss_kb},
                      {"evidence", r.evidence},
                      {"nodes_by_provider", nodes}};
  return j.dump(2);
}

Result<BenchJobResult> bench_result_from_json(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    BenchJobResult r;
    r.ok = j.at("ok");
    r.stage = j.at("stage");
    r.error = j.at("error");
    r.inputs_described = j.at("inputs");
    r.provider_version = j.at("provider_version");
    r.build_cold_ms = optional_of(j.at("build_cold_ms"));
    r.build_cached_ms = optional_of(j.at("build_cached_ms"));
    r.engine_note = j.at("engine_note");
    r.first_run_ms = j.at("first_run_ms");
    r.run_ms = j.at("run_ms").get<std::vector<double>>();
    r.bare_run_ms = j.at("bare_run_ms").get<std::vector<double>>();
    r.peak_rss_kb = j.at("peak_rss_kb");
    r.evidence = j.at("evidence").get<std::vector<std::string>>();
    for (const auto& n : j.at("nodes_by_provider")) r.nodes_by_provider.emplace_back(n.at("provider"), n.at("nodes"));
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("malformed bench result: {}", e.what())};
  }
}

BenchJobResult run_bench_job(const BenchJob& job) {
  BenchJobResult r;
  auto fail = [&](const char* stage, const std::string& error) {
    r.ok = false;
    r.stage = stage;
    r.error = clean_error(error);
    return r;
  };
  if (job.runs < 1 && job.duration_s <= 0) return fail("job", "a bench job needs runs >= 1 or a positive duration");
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return fail("runtime", build.error().message);
  auto process = OrtProcess::install(*build);
  if (!process) return fail("runtime", process.error().message);
  r.provider_version = provider_version_of(**process, job.rung);

  auto built = build_session(**process, job, r);
  if (!built) return fail("build", built.error().message);
  if (!r.engine_note.empty()) r.evidence.push_back(r.engine_note);
  fs::path loaded = built->file;
  auto prepared = prepare_session(std::move(built->session));
  if (!prepared) return fail("build", prepared.error().message);

  auto inputs = make_inputs(prepared->io, job.inputs, job.seed);
  if (!inputs) return fail("inputs", inputs.error().message);
  if (auto s = check_shapes(prepared->io, *inputs); !s) return fail("inputs", s.error().message);
  if (job.zero_inputs) zero_generated(*inputs, job.inputs);
  r.inputs_described = describe_inputs(*inputs, job.inputs);
  if (job.zero_inputs) {
    for (std::size_t p; (p = r.inputs_described.find("(random)")) != std::string::npos;) r.inputs_described.replace(p, 8, "(zeros)");
  }

  auto t0 = Clock::now();
  auto outputs = run_session(*prepared, *inputs);
  r.first_run_ms = ms_since(t0);
  if (!outputs) return fail("run", outputs.error().message);
  for (int i = 0; i < job.warmup; ++i) {
    if (auto w = run_session(*prepared, *inputs); !w) return fail("run", w.error().message);
  }

  std::optional<BareLoop> bare;
  if (job.compare_bare) bare.emplace(*prepared, *inputs);
  ProgressFile progress(job.progress_file);
  const bool by_time = job.duration_s > 0;
  const int total = by_time ? 0 : job.runs;
  const auto loop_start = Clock::now();
  const auto budget = std::chrono::duration<double>(job.duration_s);
  constexpr int kMaxRuns = 1'000'000;  // bounds memory in --duration mode on a microsecond model
  for (int i = 0; by_time ? (i == 0 || (Clock::now() - loop_start < budget && i < kMaxRuns)) : i < job.runs; ++i) {
    // With a bare run beside it, alternate which goes first so neither always meets a warmer cache.
    if (bare && i % 2 == 1) {
      double ms = bare->run_once();
      if (ms < 0) return fail("run", "the bare OrtApi::Run loop failed");
      r.bare_run_ms.push_back(ms);
    }
    t0 = Clock::now();
    auto again = run_session(*prepared, *inputs);
    r.run_ms.push_back(ms_since(t0));
    if (!again) return fail("run", again.error().message);
    outputs = std::move(again);
    if (bare && i % 2 == 0) {
      double ms = bare->run_once();
      if (ms < 0) return fail("run", "the bare OrtApi::Run loop failed");
      r.bare_run_ms.push_back(ms);
    }
    progress.update(i + 1, total);
  }
  progress.update(static_cast<int>(r.run_ms.size()), total, true);
  bare.reset();

  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) r.peak_rss_kb = static_cast<double>(usage.ru_maxrss);  // KiB on Linux

  if (!job.outputs_dir.empty()) {
    std::error_code ec;
    fs::create_directories(job.outputs_dir, ec);
    for (std::size_t i = 0; i < outputs->size(); ++i) {
      if (auto s = write_tensor_file((*outputs)[i], job.outputs_dir / fmt::format("output_{}.pb", i)); !s) {
        return fail("run", s.error().message);
      }
    }
  }
  if (job.profile) profile_one_run(**process, job, loaded, *inputs, r);
  r.ok = true;
  return r;
}

int bench_worker_main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: rung-probe-worker bench JOB.json (started by `rung bench`; writes result.json beside the job)\n");
    return 2;
  }
  fs::path job_file = argv[1];
  auto job = bench_job_from_json(read_text_file(job_file));
  BenchJobResult result;
  if (!job) {
    result.stage = "job";
    result.error = job.error().message;
  } else {
    result = run_bench_job(*job);
  }
  if (auto s = write_file_atomically(job_file.parent_path() / "result.json", bench_result_to_json(result)); !s) {
    fmt::print(stderr, "{}\n", s.error().message);
    return 1;
  }
  return 0;
}

}  // namespace rung
