#include "jobs/compile.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "graph/compile_ready.h"
#include "jobs/measure.h"
#include "os/atomic_file.h"
#include "os/read_file.h"
#include "rung/tolerance.h"
#include "session/inputs.h"
#include "session/session.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

// The compile API arrived in API 22.
constexpr int kCompileApiVersion = 22;

fs::path note_of(const fs::path& rewritten) { return fs::path(rewritten).replace_extension(".json"); }

void forget_rewrite(const fs::path& rewritten) {
  std::error_code ec;
  fs::remove(rewritten, ec);
  fs::remove(note_of(rewritten), ec);
}

// Both models on the CPU, one thread each (so no reduction order differs), fed
// the same inputs: every output must be equal to the bit.
Status computes_the_same(OrtProcess& process, const fs::path& model, const fs::path& rewritten, const CompileJob& job) {
  SessionSettings settings;
  settings.intra_op_threads = 1;
  auto open = [&](const fs::path& file) -> Result<PreparedSession> {
    auto s = open_session(process, file, settings);
    if (!s) return s.error();
    return prepare_session(std::move(*s));
  };
  auto original = open(model);
  if (!original) return original.error();
  auto candidate = open(rewritten);
  if (!candidate) return Error{candidate.error().code, "the rewritten graph does not load: " + candidate.error().message};
  auto inputs = make_inputs(original->io, job.inputs, job.seed);
  if (!inputs) return inputs.error();
  auto want = run_session(*original, *inputs);
  if (!want) {
    return Error{want.error().code,
                 fmt::format("the model does not run: {} (inputs {})", want.error().message, describe_inputs(*inputs, job.inputs))};
  }
  auto got = run_session(*candidate, *inputs);
  if (!got) return Error{got.error().code, "the rewritten graph does not run: " + got.error().message};
  auto compared = compare_outputs(*want, *got, Tolerance::exact());
  if (!compared.faithful()) {
    return Error{ErrorCode::kRuntime, fmt::format("its outputs differ from the model's: {} (inputs {})", compared.first_problem(),
                                                  describe_inputs(*inputs, job.inputs))};
  }
  return {};
}

// The file to compile: the model itself, or its compile-ready rewrite once it is
// proved to compute the same (its note says what changed); `unrewritten` says why
// a model that wanted the rewrite did not get one, should the compile then fail.
struct CompileSource {
  fs::path file;
  std::string unrewritten;
};

Result<CompileSource> compile_source(OrtProcess& process, const CompileJob& job) {
  if (job.rewritten.empty()) return CompileSource{job.model, {}};
  forget_rewrite(job.rewritten);
  auto rewrite = write_compile_ready(job.model, job.rewritten);
  if (!rewrite) return CompileSource{job.model, "no compile-ready rewrite: " + rewrite.error().message};
  if (!rewrite->changed()) return CompileSource{job.model, {}};
  if (auto same = computes_the_same(process, job.model, job.rewritten, job); !same) {
    forget_rewrite(job.rewritten);
    return Error{same.error().code, fmt::format("rewritten graph not used, {}; the rewrite: {}", same.error().message, rewrite->describe())};
  }
  nlohmann::json note = {{"model", job.model.string()}, {"rewrite", rewrite->describe()}};
  if (auto s = write_file_atomically(note_of(job.rewritten), note.dump(2)); !s) return s.error();
  return CompileSource{job.rewritten, {}};
}

CompileResult compile(const CompileJob& job) {
  auto build = load_runtime_build(job.runtime_library, job.allow_writable_runtime);
  if (!build) return {false, build.error().message, 0};
  auto process = OrtProcess::install(*build);
  if (!process) return {false, process.error().message, 0};
  try {
    if (job.rung.append == AppendMethod::kNone) {
      // The CPU rung compiles nothing; ONNX Runtime saves its optimised graph in its own format.
      SessionSettings settings;
      settings.rung = job.rung;
      settings.optimized_model_path = job.output;
      auto session = open_session(**process, job.model, settings);
      if (!session) return {false, session.error().message, 0};
      return {true, {}, 0};
    }
    if (build->api_version < kCompileApiVersion) {
      return {false, fmt::format("ONNX Runtime {} serves API {}; compiling engines needs {}", build->version, build->api_version,
                                 kCompileApiVersion),
              0};
    }
    Ort::SessionOptions options;
    ProviderSettings provider;
    provider.fp16 = job.fp16;
    provider.engine_cache_dir = job.provider_cache_dir;
    provider.trt_workspace_bytes = job.tensorrt_workspace_bytes;
    if (auto s = append_provider(options, **process, job.rung, provider); !s) return {false, s.error().message, 0};
    auto source = compile_source(**process, job);
    if (!source) return {false, source.error().message, 0};
    Ort::ModelCompilationOptions co((*process)->env(), options);
    co.SetInputModelPath(source->file.c_str());
    co.SetOutputModelPath(job.output.c_str());
    co.SetEpContextEmbedMode(true);
    Ort::Status status = Ort::CompileModel((*process)->env(), co);
    if (!status.IsOK()) {
      std::string error = status.GetErrorMessage();
      if (!source->unrewritten.empty()) error += fmt::format(" ({})", source->unrewritten);
      return {false, error, 0};
    }
    return {true, {}, 0};
  } catch (const Ort::Exception& e) {
    return {false, e.what(), 0};
  }
}

}  // namespace

CompileResult run_compile_job(const CompileJob& job) {
  auto t0 = std::chrono::steady_clock::now();
  CompileResult r = compile(job);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r.ok) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(job.output, ec)) {
      r.ok = false;
      r.error = fmt::format("{} compiled without error but wrote no {}", job.rung.display, job.output.string());
    }
  }
  return r;
}

std::string read_rewrite_note(const fs::path& rewritten) {
  std::error_code ec;
  if (rewritten.empty() || !fs::is_regular_file(rewritten, ec)) return {};
  auto j = nlohmann::json::parse(read_text_file(note_of(rewritten)), nullptr, false);
  return j.is_object() ? j.value("rewrite", "") : "";
}

std::string compile_job_to_json(const CompileJob& job) {
  nlohmann::json j = {{"runtime_library", job.runtime_library.string()},
                      {"allow_writable_runtime", job.allow_writable_runtime},
                      {"model", job.model.string()},
                      {"output", job.output.string()},
                      {"rung", nlohmann::json::parse(rung_to_json(job.rung))},
                      {"fp16", job.fp16},
                      {"provider_cache_dir", job.provider_cache_dir.string()},
                      {"tensorrt_workspace_bytes", job.tensorrt_workspace_bytes},
                      {"rewritten", job.rewritten.string()},
                      {"inputs", nlohmann::json::parse(job.inputs.canonical())},
                      {"seed", job.seed}};
  return j.dump(2);
}

int compile_worker_main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: rung-probe-worker compile JOB.json\n");
    return 2;
  }
  std::filesystem::path job_file = argv[1];
  CompileResult r;
  try {
    auto j = nlohmann::json::parse(read_text_file(job_file));
    auto rung = rung_from_json(j.at("rung").dump());
    if (!rung) throw std::runtime_error(rung.error().message);
    CompileJob job;
    job.runtime_library = j.at("runtime_library").get<std::string>();
    job.allow_writable_runtime = j.at("allow_writable_runtime");
    job.model = j.at("model").get<std::string>();
    job.output = j.at("output").get<std::string>();
    job.rung = *rung;
    job.fp16 = j.at("fp16");
    job.provider_cache_dir = j.at("provider_cache_dir").get<std::string>();
    job.tensorrt_workspace_bytes = j.at("tensorrt_workspace_bytes");
    job.rewritten = j.at("rewritten").get<std::string>();
    auto inputs = InputSpec::from_json_text(j.at("inputs").dump());
    if (!inputs) throw std::runtime_error(inputs.error().message);
    job.inputs = *inputs;
    job.seed = j.at("seed");
    r = run_compile_job(job);
  } catch (const std::exception& e) {
    r.error = fmt::format("malformed compile job {}: {}", job_file.string(), e.what());
  }
  nlohmann::json out = {{"ok", r.ok}, {"error", r.error}, {"ms", r.ms}};
  return write_file_atomically(job_file.parent_path() / "result.json", out.dump(2)) ? 0 : 1;
}

}  // namespace rung
