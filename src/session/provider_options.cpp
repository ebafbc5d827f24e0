#include "session/provider_options.h"

#include "os/library_files.h"

namespace rung {
namespace {

std::string path_str(const std::filesystem::path& p) { return p.string(); }

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
    o["backend_path"] = library_file_name("QnnHtp");
    o["htp_performance_mode"] = "default";  // burst only while a job runs: see run_option_map
    if (cache) o["ep.context_file_path"] = path_str(s.engine_cache_dir);
  } else if (rung.name == "directml") {
    // The adapter DXGI ranks fastest (a laptop's discrete GPU, where adapter 0 is often
    // its integrated one), and GPUs only: never an NPU or the software adapter.
    o["performance_preference"] = "high_performance";
    o["device_filter"] = "gpu";
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

}  // namespace rung
