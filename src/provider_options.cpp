#include "provider_options.h"

#include <fmt/format.h>

#include <unordered_map>

#include "ort_session.h"

namespace rung {
namespace {

std::string path_str(const std::filesystem::path& p) { return p.string(); }

std::unordered_map<std::string, std::string> unordered(const std::map<std::string, std::string>& m) {
  return {m.begin(), m.end()};
}

}  // namespace

std::map<std::string, std::string> provider_option_map(const RungSpec& rung, const ProviderSettings& s) {
  std::map<std::string, std::string> o;
  const bool cache = !s.engine_cache_dir.empty();
  if (rung.name == "tensorrt") {
    o["trt_fp16_enable"] = s.fp16 ? "1" : "0";
    o["trt_max_workspace_size"] = std::to_string(s.trt_workspace_bytes);
    if (cache) {
      o["trt_engine_cache_enable"] = "1";
      o["trt_engine_cache_path"] = path_str(s.engine_cache_dir);
      o["trt_timing_cache_enable"] = "1";
      o["trt_timing_cache_path"] = path_str(s.engine_cache_dir);
    }
  } else if (rung.name == "cuda") {
    o["device_id"] = "0";
    o["cudnn_conv_algo_search"] = "HEURISTIC";
  } else if (rung.name == "migraphx") {
    o["migraphx_fp16_enable"] = s.fp16 ? "1" : "0";
    // Only the generic key/value entry carries the cache directory to MIGraphX.
    if (cache) o["migraphx_model_cache_dir"] = path_str(s.engine_cache_dir);
  } else if (rung.name == "openvino") {
    o["device_type"] = s.openvino_device;
    o["precision"] = s.fp16 ? "FP16" : "FP32";
    if (cache) o["cache_dir"] = path_str(s.engine_cache_dir);
  } else if (rung.name == "qnn-htp") {
    o["backend_path"] = "libQnnHtp.so";
    o["htp_performance_mode"] = "default";  // burst only while a job runs: see run_option_map
    if (cache) o["ep.context_file_path"] = path_str(s.engine_cache_dir);
  } else if (rung.name == "coreml") {
    o["ModelFormat"] = "MLProgram";
    if (cache) o["ModelCacheDirectory"] = path_str(s.engine_cache_dir);
  }
  for (const auto& [k, v] : s.extra) o[k] = v;
  return o;
}

std::map<std::string, std::string> run_option_map(const RungSpec& rung) {
  if (rung.name == "qnn-htp") return {{"qnn.htp_perf_mode", "burst"}, {"qnn.htp_perf_mode_post_run", "default"}};
  return {};
}

Status append_provider(Ort::SessionOptions& options, OrtProcess& process, const RungSpec& rung,
                       const ProviderSettings& settings) {
  auto o = provider_option_map(rung, settings);
  try {
    switch (rung.append) {
      case AppendMethod::kNone:
        return {};
      case AppendMethod::kTensorRtV2: {
        Ort::TensorRTProviderOptions trt;
        trt.Update(unordered(o));
        options.AppendExecutionProvider_TensorRT_V2(*trt);
        return {};
      }
      case AppendMethod::kCudaV2: {
        Ort::CUDAProviderOptions cuda;
        cuda.Update(unordered(o));
        options.AppendExecutionProvider_CUDA_V2(*cuda);
        return {};
      }
      case AppendMethod::kOpenVinoV2:
        options.AppendExecutionProvider_OpenVINO_V2(unordered(o));
        return {};
      case AppendMethod::kKeyValue:
        options.AppendExecutionProvider(rung.provider, unordered(o));
        return {};
      case AppendMethod::kPluginDevice:
        return process.append_plugin(options, rung, o);
    }
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
  return Error{ErrorCode::kUnsupported, fmt::format("{}: unknown append method", rung.name)};
}

}  // namespace rung
