#include "jobs/compile.h"

#include <fmt/format.h>

#include <chrono>

#include "graph/compile_ready.h"
#include "jobs/target_session.h"
#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "rung/tolerance.h"
#include "session/inputs.h"

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
  // A proof, not a comparison of results: a NaN proves nothing about the arithmetic
  // that made it, so here NaN does not count as equal to NaN.
  Tolerance proof = Tolerance::exact();
  proof.nan_equal = false;
  auto compared = compare_outputs(*want, *got, proof);
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
  if (job.rewritten.empty()) return CompileSource{job.target.model, {}};
  forget_rewrite(job.rewritten);
  auto rewrite = write_compile_ready(job.target.model, job.rewritten);
  if (!rewrite && !compile_ready_rewrite_built()) return rewrite.error();  // no engine for what it cannot make ready
  if (!rewrite) return CompileSource{job.target.model, "no compile-ready rewrite: " + rewrite.error().message};
  if (!rewrite->changed()) return CompileSource{job.target.model, {}};
  if (auto same = computes_the_same(process, job.target.model, job.rewritten, job); !same) {
    forget_rewrite(job.rewritten);
    return Error{same.error().code, fmt::format("rewritten graph not used, {}; the rewrite: {}", same.error().message, rewrite->describe())};
  }
  nlohmann::json note = {{"model", job.target.model.string()}, {"rewrite", rewrite->describe()}};
  RUNG_RETURN_IF_ERROR(write_file_atomically(note_of(job.rewritten), json_text(note, 2)));
  return CompileSource{job.rewritten, {}};
}

CompileResult compile(const CompileJob& job) {
  auto process = install_runtime(job.target);
  if (!process) return {false, process.error().message, 0};
  const RuntimeBuild& build = (*process)->build();
  const RungSpec& rung = job.target.rung;
  try {
    if (rung.append == AppendMethod::kNone) {
      // The CPU rung compiles nothing; ONNX Runtime saves its optimised graph in its own format.
      SessionSettings settings = session_settings(job.target);
      settings.optimized_model_path = job.output;
      auto session = open_session(**process, job.target.model, settings);
      if (!session) return {false, session.error().message, 0};
      return {true, {}, 0};
    }
    if (build.api_version < kCompileApiVersion) {
      return {false, fmt::format("ONNX Runtime {} serves API {}; compiling engines needs {}", build.version, build.api_version,
                                 kCompileApiVersion),
              0};
    }
    Ort::SessionOptions options;
    ProviderSettings provider;
    provider.extra = job.target.provider_options;
    provider.fp16 = job.fp16;
    provider.engine_cache_dir = job.provider_cache_dir;
    provider.trt_workspace_bytes = job.tensorrt_workspace_bytes;
    if (auto s = append_provider(options, **process, rung, provider); !s) return {false, s.error().message, 0};
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
      r.error = fmt::format("{} compiled without error but wrote no {}", job.target.rung.display, job.output.string());
    }
  }
  return r;
}

std::string read_rewrite_note(const fs::path& rewritten) {
  std::error_code ec;
  if (rewritten.empty() || !fs::is_regular_file(rewritten, ec)) return {};
  auto note = read_input_file_if_usable(note_of(rewritten), FileKind::kDocument);
  return note ? json_string_or(parse_json_or_discarded(*note), "rewrite", "") : std::string();
}

nlohmann::json compile_job_entry(const nlohmann::json& job, LineChannel*) { return run_compile_job(job.get<CompileJob>()); }

}  // namespace rung
