// CUDA: NVIDIA's kernels, run as the model is (f32), below TensorRT.
#include "os/library_files.h"
#include "rungs/module.h"

namespace rung {
namespace {

std::map<std::string, std::string> cuda_options(const ProviderSettings&) {
  // The first device, and cuDNN's heuristic rather than its exhaustive search:
  // the search runs every convolution's candidates at session start.
  return {{"device_id", "0"}, {"cudnn_conv_algo_search", "HEURISTIC"}};
}

}  // namespace

RungModule rung_module_cuda() {
  RungModule m;
  m.spec = {"cuda", "CUDA", "CUDAExecutionProvider", AppendMethod::kCudaV2, ModelForm::kF32, false,
            {library_file_name("onnxruntime_providers_cuda"), library_file_name("onnxruntime_providers_shared")}, {}};
  m.rank = 20;
  m.platforms = {"nvidia", "no-gpu-seen"};
  m.provider_options = cuda_options;
  m.about = "NVIDIA's CUDA kernels, in f32";
  return m;
}

}  // namespace rung
