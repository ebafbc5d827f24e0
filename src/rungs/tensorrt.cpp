// TensorRT: NVIDIA's compiler, the first rung on an NVIDIA GPU. The f32 model
// becomes an fp16 engine, kept with its timing cache beside the engine cache.
#include "os/library_files.h"
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> tensorrt_options(const ProviderSettings& s) {
  std::map<std::string, std::string> o{{"trt_fp16_enable", s.fp16 ? "1" : "0"},
                                       {"trt_max_workspace_size", std::to_string(s.trt_workspace_bytes)}};
  if (!s.engine_cache_dir.empty()) {
    const std::string dir = s.engine_cache_dir.string();
    o["trt_engine_cache_enable"] = "1";
    o["trt_engine_cache_path"] = dir;
    o["trt_timing_cache_enable"] = "1";
    o["trt_timing_cache_path"] = dir;
  }
  return o;
}

}  // namespace

RungModule rung_module_tensorrt() {
  RungModule m;
  m.spec = {"tensorrt", "TensorRT", "TensorrtExecutionProvider", AppendMethod::kTensorRtV2, ModelForm::kF32ToF16Engine, true,
            {library_file_name("onnxruntime_providers_tensorrt"), library_file_name("onnxruntime_providers_shared")}, {}};
  m.rank = 10;
  m.platforms = {"nvidia", "no-gpu-seen"};
  m.provider_options = tensorrt_options;
  m.about = "NVIDIA's TensorRT: the f32 model compiled into an fp16 engine";
  return m;
}

}  // namespace rung
