#include "rung/ladder.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "os/library_files.h"

namespace rung {
namespace {

std::vector<RungSpec> make_rungs() {
  // An out-of-library provider's own file, and the shared-provider bridge each needs beside it.
  const auto provider = [](const char* name) { return library_file_name(std::string("onnxruntime_providers_") + name); };
  const std::string shared = provider("shared");
  using F = ModelForm;
  using A = AppendMethod;
  return {
      {"tensorrt", "TensorRT", "TensorrtExecutionProvider", A::kTensorRtV2, F::kF32ToF16Engine, true,
       {provider("tensorrt"), shared}, {}},
      {"cuda", "CUDA", "CUDAExecutionProvider", A::kCudaV2, F::kF32, false,
       {provider("cuda"), shared}, {}},
      {"migraphx", "MIGraphX", "MIGraphXExecutionProvider", A::kKeyValue, F::kF32ToF16Engine, true,
       {provider("migraphx"), shared}, {}},
      {"openvino", "OpenVINO", "OpenVINOExecutionProvider", A::kOpenVinoV2, F::kF32ToF16Engine, true,
       {provider("openvino"), shared}, {}},
      {"qnn-htp", "QNN HTP", "QNNExecutionProvider", A::kKeyValue, F::kQuantized, true, {library_file_name("QnnHtp")}, {}},
      {"coreml", "CoreML", "CoreMLExecutionProvider", A::kKeyValue, F::kF32, true, {}, {}},
      // Inside onnxruntime.dll on Windows, with DirectML.dll beside it: no provider file of its own.
      {"directml", "DirectML", "DmlExecutionProvider", A::kKeyValue, F::kF32, false, {}, {}},
      {"webgpu", "WebGPU", "WebGpuExecutionProvider", A::kKeyValue, F::kF32, false, {}, {}},
      {"cpu", "CPU", "CPUExecutionProvider", A::kNone, F::kF32, false, {}, {}},
  };
}

struct PlatformRule {
  Platform platform;
  std::function<bool(const Hardware&)> matches;
};

bool has_any_gpu(const Hardware& hw) {
  return !hw.gpus.empty() || !hw.dri_render_nodes.empty() || !hw.soc_gpus.empty() || hw.os == OsKind::kAndroid || hw.os == OsKind::kMacos;
}

bool has_mali_or_adreno(const Hardware& hw) {
  return std::any_of(hw.soc_gpus.begin(), hw.soc_gpus.end(),
                     [](const SocGpu& g) { return g.vendor == Vendor::kArm || g.vendor == Vendor::kQualcomm; });
}

// Best first. A device can be several platforms (an Intel laptop with an NVIDIA
// dGPU); its ladder is theirs in this order. "other-gpu" covers a GPU that no
// vendor platform claimed.
const std::vector<PlatformRule>& platform_rules() {
  static const std::vector<PlatformRule> rules = {
      {{"qualcomm-hexagon", "Qualcomm SoC with a Hexagon NPU", {"qnn-htp"}, 4},
       [](const Hardware& hw) { return hw.soc && hw.soc->vendor == "Qualcomm" && hw.hexagon_dsp; }},
      {{"macos", "macOS", {"coreml"}, 4}, [](const Hardware& hw) { return hw.os == OsKind::kMacos; }},
      {{"nvidia", "NVIDIA GPU", {"tensorrt", "cuda"}, 4},
       [](const Hardware& hw) { return hw.has_gpu(Vendor::kNvidia) || hw.nvidia_driver.has_value(); }},
      {{"amd-rocm", "AMD GPU with ROCm", {"migraphx"}, 4},
       [](const Hardware& hw) { return hw.has_gpu(Vendor::kAmd) && hw.rocm_kfd; }},
      {{"intel-gpu", "Intel GPU", {"openvino"}, 3}, [](const Hardware& hw) { return hw.has_gpu(Vendor::kIntel); }},
      // Any Direct3D 12 GPU on Windows, NVIDIA's and Intel's below their own rungs: DirectML,
      // then WebGPU (Dawn on D3D12).
      {{"windows-directx", "a Direct3D 12 GPU on Windows", {"directml", "webgpu"}, 2},
       [](const Hardware& hw) { return hw.os == OsKind::kWindows && !hw.gpus.empty(); }},
      // Mali and Adreno on Linux boards: Vulkan drivers (panvk, turnip, Arm's own) that WebGPU runs on.
      {{"arm-soc-gpu", "Arm Mali or Qualcomm Adreno GPU on the SoC", {"webgpu"}, 2},
       [](const Hardware& hw) { return hw.os == OsKind::kLinux && has_mali_or_adreno(hw); }},
      {{"other-gpu", "a GPU no vendor rung covers", {"webgpu"}, 2},
       [](const Hardware& hw) {
         if (!has_any_gpu(hw) || hw.os == OsKind::kWindows) return false;  // Windows': windows-directx
         if (hw.os == OsKind::kLinux && has_mali_or_adreno(hw) && hw.gpus.empty()) return false;  // arm-soc-gpu's
         if (hw.os == OsKind::kAndroid) return !(hw.soc && hw.soc->vendor == "Qualcomm" && hw.hexagon_dsp);
         return std::any_of(hw.gpus.begin(), hw.gpus.end(), [&](const PciDevice& d) {
           return d.vendor != Vendor::kNvidia && d.vendor != Vendor::kIntel &&
                  !(d.vendor == Vendor::kAmd && hw.rocm_kfd);
         }) || (hw.gpus.empty() && hw.os == OsKind::kLinux);
       }},
      {{"no-gpu-seen", "no GPU seen", {"tensorrt", "cuda", "migraphx", "openvino", "directml", "webgpu"}, 1},
       [](const Hardware& hw) { return !has_any_gpu(hw) && !hw.nvidia_driver; }},
  };
  return rules;
}

}  // namespace

const char* form_name(ModelForm form) {
  switch (form) {
    case ModelForm::kF32: return "f32";
    case ModelForm::kF32ToF16Engine: return "f32 model, fp16 engine";
    case ModelForm::kQuantized: return "quantised";
  }
  return "?";
}

const char* append_method_name(AppendMethod method) {
  switch (method) {
    case AppendMethod::kNone: return "built in";
    case AppendMethod::kTensorRtV2: return "TensorRT V2 options";
    case AppendMethod::kCudaV2: return "CUDA V2 options";
    case AppendMethod::kOpenVinoV2: return "OpenVINO V2 key/value";
    case AppendMethod::kKeyValue: return "generic key/value";
    case AppendMethod::kPluginDevice: return "plugin EP devices (V2)";
  }
  return "?";
}

const std::vector<RungSpec>& known_rungs() {
  static const std::vector<RungSpec> rungs = make_rungs();
  return rungs;
}

const std::vector<Platform>& known_platforms() {
  static const std::vector<Platform> platforms = [] {
    std::vector<Platform> out;
    for (const auto& rule : platform_rules()) out.push_back(rule.platform);
    return out;
  }();
  return platforms;
}

bool same_rung_name(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

const RungSpec* find_rung(std::string_view name) {
  for (const auto& r : known_rungs()) {
    if (same_rung_name(r.name, name) || same_rung_name(r.display, name)) return &r;
  }
  return nullptr;
}

std::string canonical_rung_name(std::string_view name) {
  const RungSpec* r = find_rung(name);
  return r != nullptr ? r->name : std::string(name);
}

std::vector<const Platform*> recognise_platforms(const Hardware& hardware) {
  std::vector<const Platform*> out;
  const auto& platforms = known_platforms();
  const auto& rules = platform_rules();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].matches(hardware)) out.push_back(&platforms[i]);
  }
  return out;
}

Ladder ladder_for(const Hardware& hardware) {
  Ladder ladder;
  for (const Platform* p : recognise_platforms(hardware)) {
    ladder.platforms.push_back(p->id);
    if (p->id == "no-gpu-seen") ladder.only_rungs_in_build = true;
    for (const auto& name : p->rungs) {
      bool seen = std::any_of(ladder.rungs.begin(), ladder.rungs.end(), [&](const RungSpec& r) { return r.name == name; });
      if (!seen) ladder.rungs.push_back(*find_rung(name));
    }
  }
  ladder.rungs.push_back(*find_rung("cpu"));
  return ladder;
}

std::vector<RungSpec> Ladder::for_build(const std::vector<std::string>& providers) const {
  if (!only_rungs_in_build) return rungs;
  std::vector<RungSpec> out;
  for (const auto& r : rungs) {
    bool carried = r.append == AppendMethod::kPluginDevice || r.name == "cpu" ||
                   std::find(providers.begin(), providers.end(), r.provider) != providers.end();
    if (carried) out.push_back(r);
  }
  return out;
}

std::string Ladder::describe() const {
  std::string out;
  for (const auto& r : rungs) {
    if (!out.empty()) out += " -> ";
    out += r.display;
  }
  return out;
}

RungSpec plugin_rung(const std::string& ep_name, const std::string& library_path) {
  RungSpec r;
  r.name = ep_name;
  r.display = ep_name;
  r.provider = ep_name;
  r.append = AppendMethod::kPluginDevice;
  r.form = ModelForm::kF32;
  r.compiles_engines = true;
  r.plugin_library = library_path;
  return r;
}

}  // namespace rung
