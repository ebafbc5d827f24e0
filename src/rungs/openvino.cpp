// OpenVINO: Intel's runtime, on an Intel GPU; the f32 model compiled to fp16.
#include "os/library_files.h"
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> openvino_options(const ProviderSettings& s) {
  std::map<std::string, std::string> o{{"device_type", s.openvino_device}, {"precision", s.fp16 ? "FP16" : "FP32"}};
  if (!s.engine_cache_dir.empty()) o["cache_dir"] = s.engine_cache_dir.string();
  return o;
}

}  // namespace

RungModule rung_module_openvino() {
  RungModule m;
  m.spec = {"openvino", "OpenVINO", "OpenVINOExecutionProvider", AppendMethod::kOpenVinoV2, ModelForm::kF32ToF16Engine, true,
            {library_file_name("onnxruntime_providers_openvino"), library_file_name("onnxruntime_providers_shared")}, {}};
  m.rank = 40;
  m.platforms = {"intel-gpu", "no-gpu-seen"};
  m.provider_options = openvino_options;
  m.about = "Intel's OpenVINO on an Intel GPU: the f32 model compiled to fp16";
  return m;
}

}  // namespace rung
