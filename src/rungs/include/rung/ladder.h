// The ladder: per platform, the execution providers to try in order, as data.
// The probe walks it top to bottom; the CPU rung is always the floor. Each
// in-tree rung is one module, src/rungs/<rung>.cpp, that says everything about it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rung/hardware.h"

namespace rung {

// Which model file a rung loads and what arithmetic it runs.
enum class ModelForm {
  kF32,             // the canonical f32 file, run in f32
  kF32ToF16Engine,  // the f32 file, compiled by the provider into an fp16 engine/program
  kQuantized,       // the release-time quantised QDQ form (int8, A16W8, A16W16)
};
const char* form_name(ModelForm form);  // "f32", "f32 model, fp16 engine", "quantised"

// How a provider is attached to session options.
enum class AppendMethod {
  kNone,            // the CPU provider: always there
  kTensorRtV2,      // SessionOptionsAppendExecutionProvider_TensorRT_V2 with its options struct
  kCudaV2,          // SessionOptionsAppendExecutionProvider_CUDA_V2 with its options struct
  kOpenVinoV2,      // SessionOptionsAppendExecutionProvider_OpenVINO_V2 (key/value)
  kKeyValue,        // the generic SessionOptionsAppendExecutionProvider(name, keys, values)
  kPluginDevice,    // a plugin EP library: RegisterExecutionProviderLibrary, then _V2 with its EP devices
};
const char* append_method_name(AppendMethod method);

struct RungSpec {
  std::string name;        // stable id: "tensorrt", "cuda", ..., "cpu"; plugin rungs use their EP name
  std::string display;     // "TensorRT"
  std::string provider;    // "TensorrtExecutionProvider"
  AppendMethod append = AppendMethod::kNone;
  ModelForm form = ModelForm::kF32;
  bool compiles_engines = false;
  // Files that must sit beside libonnxruntime for the provider to load
  // (empty when it is built into the library).
  std::vector<std::string> provider_libraries;
  // For kPluginDevice: the plugin library's absolute path.
  std::string plugin_library;
};

// A platform rung recognises from the hardware, with its rungs above the floor.
struct Platform {
  std::string id;          // "nvidia", "amd-rocm", "intel-gpu", "qualcomm-hexagon", "macos", "other-gpu", "no-gpu-seen"
  std::string description; // "NVIDIA GPU"
  std::vector<std::string> rungs;  // rung names, best first, CPU excluded; rungs a device's hardware decides (XNNPACK: an Arm CPU) included
  int build_fit = 1;       // score of a build carrying one of these rungs' providers (see score_build)
};

struct Ladder {
  std::vector<std::string> platforms;  // ids of the platforms recognised, best first
  std::vector<RungSpec> rungs;         // best first; the CPU rung last
  // When no GPU was seen, a GPU may still be there (a container, a VM with
  // passthrough): the ladder then holds every accelerator rung, and those the
  // chosen build does not carry are dropped rather than reported as failures.
  bool only_rungs_in_build = false;

  // The rungs to walk for a build with these providers: those above, and a rung
  // only some builds carry (XNNPACK), dropped where this build lacks them.
  std::vector<RungSpec> for_build(const std::vector<std::string>& providers) const;
  std::string describe() const;  // "TensorRT -> CUDA -> CPU"
};

// Every rung rung knows, and every platform, in preference order.
const std::vector<RungSpec>& known_rungs();
const std::vector<Platform>& known_platforms();
// A rung as a person names it: its id ("tensorrt", "qnn-htp") or its display
// name ("TensorRT", "QNN HTP"), in any case. Every face that takes a rung's
// name (flags, RUNG_FORCE_RUNG, the C ABI, manifests) goes through these.
const RungSpec* find_rung(std::string_view name);
// Whether two rung names are the same rung's (ASCII case ignored): for names a
// ladder holds that rung does not know, such as a plugin's ("rung_sim_ep").
bool same_rung_name(std::string_view a, std::string_view b);
// The id of a rung rung knows, however it was written; any other name as given.
std::string canonical_rung_name(std::string_view name);

// Whether this is the CPU floor: ONNX Runtime's own provider, attached to nothing.
bool is_cpu_floor(const RungSpec& rung);
// The CPU floor's spec, the last rung of every ladder (the module is_cpu_floor picks).
const RungSpec& cpu_floor_rung();

// The platforms this hardware is, best first ("no-gpu-seen" when no GPU at all).
std::vector<const Platform*> recognise_platforms(const Hardware& hardware);

Ladder ladder_for(const Hardware& hardware);

// A plugin EP library dropped into a plugin directory becomes a rung above the
// platform's own (the caller decides where plugins come from).
RungSpec plugin_rung(const std::string& ep_name, const std::string& library_path);

}  // namespace rung
