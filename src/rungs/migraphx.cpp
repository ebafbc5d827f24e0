// MIGraphX: AMD's graph compiler on ROCm; the f32 model becomes an fp16 program.
#include "os/library_files.h"
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> migraphx_options(const ProviderSettings& s) {
  std::map<std::string, std::string> o{{"migraphx_fp16_enable", s.fp16 ? "1" : "0"}};
  // Only the generic key/value entry carries the cache directory to MIGraphX.
  if (!s.engine_cache_dir.empty()) o["migraphx_model_cache_dir"] = s.engine_cache_dir.string();
  return o;
}

}  // namespace

RungModule rung_module_migraphx() {
  RungModule m;
  m.spec = {"migraphx", "MIGraphX", "MIGraphXExecutionProvider", AppendMethod::kKeyValue, ModelForm::kF32ToF16Engine, true,
            {library_file_name("onnxruntime_providers_migraphx"), library_file_name("onnxruntime_providers_shared")}, {}};
  m.rank = 30;
  m.platforms = {"amd-rocm", "no-gpu-seen"};
  m.provider_options = migraphx_options;
  m.about = "AMD's MIGraphX on ROCm: the f32 model compiled into an fp16 program";
  return m;
}

}  // namespace rung
