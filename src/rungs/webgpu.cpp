// WebGPU: Dawn inside ONNX Runtime, on whatever GPU API the system has (D3D12,
// Vulkan, Metal); the rung for a GPU no vendor rung covers.
#include "rungs/module.h"

namespace rung {

RungModule rung_module_webgpu() {
  RungModule m;
  m.spec = {"webgpu", "WebGPU", "WebGpuExecutionProvider", AppendMethod::kKeyValue, ModelForm::kF32, false, {}, {}};
  m.rank = 80;
  m.platforms = {"windows-directx", "arm-soc-gpu", "other-gpu", "no-gpu-seen"};
  m.runs_on_vulkan = true;
  m.about = "WebGPU (Dawn) on the system's GPU API: D3D12, Vulkan or Metal";
  return m;
}

}  // namespace rung
