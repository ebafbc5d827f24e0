// DirectML: any Direct3D 12 GPU on Windows. Inside onnxruntime.dll, with
// DirectML.dll beside it: no provider file of its own.
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> directml_options(const ProviderSettings&) {
  // The adapter DXGI ranks fastest (a laptop's discrete GPU, where adapter 0 is often
  // its integrated one), and GPUs only: never an NPU or the software adapter.
  return {{"performance_preference", "high_performance"}, {"device_filter", "gpu"}};
}

}  // namespace

RungModule rung_module_directml() {
  RungModule m;
  m.spec = {"directml", "DirectML", "DmlExecutionProvider", AppendMethod::kKeyValue, ModelForm::kF32, false, {}, {}};
  m.rank = 70;
  m.platforms = {"windows-directx", "no-gpu-seen"};
  m.provider_options = directml_options;
  m.quirks.memory_pattern = false;
  m.quirks.parallel_execution = false;
  m.about = "Microsoft's DirectML on a Direct3D 12 GPU, Windows only";
  return m;
}

}  // namespace rung
