#include "jobs/compile.h"

#include <fmt/format.h>

#include <chrono>

#include "jobs/target_session.h"

namespace rung {
namespace {

// The compile API arrived in API 22.
constexpr int kCompileApiVersion = 22;

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
    Ort::ModelCompilationOptions co((*process)->env(), options);
    co.SetInputModelPath(job.target.model.c_str());
    co.SetOutputModelPath(job.output.c_str());
    co.SetEpContextEmbedMode(true);
    Ort::Status status = Ort::CompileModel((*process)->env(), co);
    if (!status.IsOK()) return {false, status.GetErrorMessage(), 0};
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

nlohmann::json compile_job_entry(const nlohmann::json& job, LineChannel*) { return run_compile_job(job.get<CompileJob>()); }

}  // namespace rung
