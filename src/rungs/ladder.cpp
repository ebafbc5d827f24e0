#include "rung/ladder.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "rungs/module.h"

namespace rung {
namespace {

std::vector<RungSpec> make_rungs() {
  std::vector<RungSpec> out;
  for (const auto& m : rung_modules()) out.push_back(m.spec);
  return out;
}

bool holds(const RungModule& m, const std::string& platform) {
  return std::find(m.platforms.begin(), m.platforms.end(), platform) != m.platforms.end();
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
// vendor platform claimed. Which rungs a platform's ladder holds, and in what
// order, each rung's module says (RungModule::platforms, rank).
const std::vector<PlatformRule>& platform_rules() {
  static const std::vector<PlatformRule> rules = {
      {{"qualcomm-hexagon", "Qualcomm SoC with a Hexagon NPU", {}, 4},
       [](const Hardware& hw) { return hw.soc && hw.soc->vendor == "Qualcomm" && hw.hexagon_dsp; }},
      {{"macos", "macOS", {}, 4}, [](const Hardware& hw) { return hw.os == OsKind::kMacos; }},
      {{"nvidia", "NVIDIA GPU", {}, 4},
       [](const Hardware& hw) { return hw.has_gpu(Vendor::kNvidia) || hw.nvidia_driver.has_value(); }},
      {{"amd-rocm", "AMD GPU with ROCm", {}, 4},
       [](const Hardware& hw) { return hw.has_gpu(Vendor::kAmd) && hw.rocm_kfd; }},
      {{"intel-gpu", "Intel GPU", {}, 3}, [](const Hardware& hw) { return hw.has_gpu(Vendor::kIntel); }},
      // Any Direct3D 12 GPU on Windows, NVIDIA's and Intel's below their own rungs: DirectML,
      // then WebGPU (Dawn on D3D12).
      {{"windows-directx", "a Direct3D 12 GPU on Windows", {}, 2},
       [](const Hardware& hw) { return hw.os == OsKind::kWindows && !hw.gpus.empty(); }},
      // Mali and Adreno on Linux boards: Vulkan drivers (panvk, turnip, Arm's own) that WebGPU runs on.
      {{"arm-soc-gpu", "Arm Mali or Qualcomm Adreno GPU on the SoC", {}, 2},
       [](const Hardware& hw) { return hw.os == OsKind::kLinux && has_mali_or_adreno(hw); }},
      {{"other-gpu", "a GPU no vendor rung covers", {}, 2},
       [](const Hardware& hw) {
         if (!has_any_gpu(hw) || hw.os == OsKind::kWindows) return false;  // Windows': windows-directx
         if (hw.os == OsKind::kLinux && has_mali_or_adreno(hw) && hw.gpus.empty()) return false;  // arm-soc-gpu's
         if (hw.os == OsKind::kAndroid) return !(hw.soc && hw.soc->vendor == "Qualcomm" && hw.hexagon_dsp);
         return std::any_of(hw.gpus.begin(), hw.gpus.end(), [&](const PciDevice& d) {
           return d.vendor != Vendor::kNvidia && d.vendor != Vendor::kIntel &&
                  !(d.vendor == Vendor::kAmd && hw.rocm_kfd);
         }) || (hw.gpus.empty() && hw.os == OsKind::kLinux);
       }},
      {{"no-gpu-seen", "no GPU seen", {}, 1},
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
    for (const auto& rule : platform_rules()) {
      Platform p = rule.platform;
      for (const auto& m : rung_modules()) {
        if (holds(m, p.id)) p.rungs.push_back(m.spec.name);
      }
      for (const auto& m : rung_modules()) {  // below the platform's own: a CPU's kernels, never above a GPU's
        if (on_every_platform(m) && !is_cpu_floor(m.spec)) p.rungs.push_back(m.spec.name);
      }
      out.push_back(std::move(p));
    }
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
      const RungSpec* rung = find_rung(name);
      const RungModule* m = module_of(*rung);
      if (m->needs != nullptr && !m->needs(hardware)) continue;
      bool seen = std::any_of(ladder.rungs.begin(), ladder.rungs.end(), [&](const RungSpec& r) { return r.name == name; });
      if (!seen) ladder.rungs.push_back(*rung);
    }
  }
  // The rungs every platform holds come after every platform's own (an Intel
  // laptop with an NVIDIA GPU: its OpenVINO above them too), the floor last.
  std::stable_partition(ladder.rungs.begin(), ladder.rungs.end(),
                        [](const RungSpec& r) { return !on_every_platform(*module_of(r)); });
  ladder.rungs.push_back(known_rungs().back());
  return ladder;
}

bool is_cpu_floor(const RungSpec& rung) { return rung.append == AppendMethod::kNone; }

const RungSpec& cpu_floor_rung() {
  static const RungSpec& floor = *std::find_if(known_rungs().begin(), known_rungs().end(), is_cpu_floor);  // RungModulesTest: exactly one
  return floor;
}

std::vector<RungSpec> Ladder::for_build(const std::vector<std::string>& providers) const {
  std::vector<RungSpec> out;
  for (const auto& r : rungs) {
    const RungModule* m = module_of(r);
    const bool optional = only_rungs_in_build || (m != nullptr && m->only_if_built);
    bool carried = r.append == AppendMethod::kPluginDevice || is_cpu_floor(r) ||
                   std::find(providers.begin(), providers.end(), r.provider) != providers.end();
    if (carried || !optional) out.push_back(r);
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
