// CoreML: Apple's runtime on macOS (the Neural Engine, the GPU or the CPU, as CoreML chooses).
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> coreml_options(const ProviderSettings& s) {
  std::map<std::string, std::string> o{{"ModelFormat", "MLProgram"}};
  if (!s.engine_cache_dir.empty()) o["ModelCacheDirectory"] = s.engine_cache_dir.string();
  return o;
}

}  // namespace

RungModule rung_module_coreml() {
  RungModule m;
  m.spec = {"coreml", "CoreML", "CoreMLExecutionProvider", AppendMethod::kKeyValue, ModelForm::kF32, true, {}, {}};
  m.rank = 60;
  m.platforms = {"macos"};
  m.provider_options = coreml_options;
  m.about = "Apple's CoreML on macOS, as an ML program";
  return m;
}

}  // namespace rung
