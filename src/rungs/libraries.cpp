#include "rungs/libraries.h"

#include <fmt/format.h>

#include <algorithm>

#include "os/library_files.h"
#include "rung/ladder.h"

namespace rung {
namespace {

// How a library's file name carries the version a person knows it by.
enum class Versioning {
  kNone,         // it does not (a driver, or an ABI number nobody installs by)
  kProduct,      // the major after ".so." is the product's: libcudart.so.13 is CUDA 13
  kComponent,    // the major is the component's own: libcurand.so.10 is cuRAND 10, from any recent CUDA
  kOpenVino,     // OpenVINO's "libopenvino.so.2541" is OpenVINO 2025.4.1
};

struct KnownLibrary {
  std::string_view stem;       // the name before ".so"; a trailing '*' matches any rest
  std::string_view product;    // what a person installs
  std::string_view component;  // the part of it this library is; empty for the product itself
  Versioning versioning;
  bool driver;
};

// The table. Providers' own files (libonnxruntime_providers_<x>.so) are named from
// the ladder's rungs, which list them.
constexpr KnownLibrary kLibraries[] = {
    // NVIDIA: the driver, the CUDA toolkit, cuDNN, TensorRT.
    {"libcuda", "the NVIDIA driver", "", Versioning::kNone, true},
    {"libnvidia-ml", "the NVIDIA driver", "NVML", Versioning::kNone, true},
    {"libnvidia-*", "the NVIDIA driver", "", Versioning::kNone, true},
    {"libnvcuvid", "the NVIDIA driver", "video decoder", Versioning::kNone, true},
    {"libcudart", "CUDA", "", Versioning::kProduct, false},
    {"libcublas", "CUDA", "cuBLAS", Versioning::kProduct, false},
    {"libcublasLt", "CUDA", "cuBLASLt", Versioning::kProduct, false},
    {"libnvrtc", "CUDA", "NVRTC", Versioning::kProduct, false},
    {"libnvrtc-builtins", "CUDA", "NVRTC builtins", Versioning::kProduct, false},
    {"libnvJitLink", "CUDA", "nvJitLink", Versioning::kProduct, false},
    {"libcupti", "CUDA", "CUPTI", Versioning::kProduct, false},
    {"libnvblas", "CUDA", "NVBLAS", Versioning::kProduct, false},
    {"libcurand", "the CUDA toolkit", "cuRAND", Versioning::kComponent, false},
    {"libcufft", "the CUDA toolkit", "cuFFT", Versioning::kComponent, false},
    {"libcufftw", "the CUDA toolkit", "cuFFTW", Versioning::kComponent, false},
    {"libcusparse", "the CUDA toolkit", "cuSPARSE", Versioning::kComponent, false},
    {"libcusolver", "the CUDA toolkit", "cuSOLVER", Versioning::kComponent, false},
    {"libnvToolsExt", "the CUDA toolkit", "NVTX", Versioning::kComponent, false},
    {"libcudnn", "cuDNN", "", Versioning::kProduct, false},
    {"libcudnn_*", "cuDNN", "", Versioning::kProduct, false},
    {"libnvinfer", "TensorRT", "", Versioning::kProduct, false},
    {"libnvinfer_*", "TensorRT", "", Versioning::kProduct, false},
    {"libnvonnxparser", "TensorRT", "ONNX parser", Versioning::kProduct, false},
    {"libnccl", "NCCL", "", Versioning::kProduct, false},
    // AMD: ROCm and MIGraphX. HIP's major is ROCm's (libamdhip64.so.6 is ROCm 6).
    {"libmigraphx*", "MIGraphX", "", Versioning::kNone, false},
    {"libamdhip64", "ROCm", "HIP runtime", Versioning::kProduct, false},
    {"libhiprtc", "ROCm", "hipRTC", Versioning::kProduct, false},
    {"libhsa-runtime64", "ROCm", "HSA runtime", Versioning::kNone, false},
    {"librocblas", "ROCm", "rocBLAS", Versioning::kComponent, false},
    {"libhipblas", "ROCm", "hipBLAS", Versioning::kComponent, false},
    {"libhipblaslt", "ROCm", "hipBLASLt", Versioning::kComponent, false},
    {"libMIOpen", "ROCm", "MIOpen", Versioning::kComponent, false},
    {"librocm_smi64", "ROCm", "ROCm SMI", Versioning::kComponent, false},
    // Intel: OpenVINO and the oneTBB it runs on.
    {"libopenvino", "OpenVINO", "", Versioning::kOpenVino, false},
    {"libopenvino_*", "OpenVINO", "", Versioning::kOpenVino, false},
    {"libtbb", "oneTBB", "", Versioning::kProduct, false},
    {"libtbbmalloc", "oneTBB", "allocator", Versioning::kProduct, false},
    // Qualcomm: the QNN runtime and the DSP driver under it.
    {"libQnnHtp", "the Qualcomm QNN runtime", "HTP backend", Versioning::kNone, false},
    {"libQnn*", "the Qualcomm QNN runtime", "", Versioning::kNone, false},
    {"libcdsprpc", "the Qualcomm FastRPC driver", "", Versioning::kNone, true},
    // WebGPU (Dawn) draws on Vulkan.
    {"libvulkan", "the Vulkan loader", "", Versioning::kNone, false},
    // ONNX Runtime's own.
    {"libonnxruntime_providers_shared", "ONNX Runtime", "provider bridge", Versioning::kNone, false},
    {"libonnxruntime", "ONNX Runtime", "", Versioning::kNone, false},
};

bool stem_matches(std::string_view pattern, std::string_view stem) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    return stem.size() > pattern.size() && stem.substr(0, pattern.size()) == pattern;
  }
  return stem == pattern;
}

// The most specific entry: an exact stem before a pattern.
const KnownLibrary* find_known(std::string_view stem) {
  const KnownLibrary* best = nullptr;
  for (const auto& k : kLibraries) {
    if (!stem_matches(k.stem, stem)) continue;
    if (k.stem.back() != '*') return &k;
    if (best == nullptr || k.stem.size() > best->stem.size()) best = &k;
  }
  return best;
}

// "2025.4.1" from OpenVINO's "2541"; as it is when it has another shape.
std::string openvino_version(std::string_view digits) {
  bool four_digits = digits.size() == 4 && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!four_digits) return std::string(digits);
  return fmt::format("20{}.{}.{}", digits.substr(0, 2), digits[2], digits[3]);
}

// The rung whose provider file this is ("libonnxruntime_providers_cuda.so").
const RungSpec* rung_of_provider_file(std::string_view file) {
  for (const auto& r : known_rungs()) {
    if (!r.provider_libraries.empty() && r.provider_libraries.front() == file) return &r;
  }
  return nullptr;
}

}  // namespace

LibraryIdentity identify_library(std::string_view file) {
  LibraryIdentity id;
  id.file = std::string(file);
  id.what = id.product = id.file;
  if (const RungSpec* rung = rung_of_provider_file(file)) {
    id.what = id.product = fmt::format("ONNX Runtime's {} provider", rung->display);
    id.known = true;
    return id;
  }
  const auto name = split_library_file_name(file);
  if (!name) return id;
  const KnownLibrary* k = find_known(name->base);
  if (k == nullptr) return id;
  std::string_view major = name->version.substr(0, name->version.find('.'));
  std::string product(k->product);
  switch (k->versioning) {
    case Versioning::kProduct:
      if (!major.empty()) product = fmt::format("{} {}", k->product, major);
      break;
    case Versioning::kOpenVino:
      if (!name->version.empty()) product = fmt::format("{} {}", k->product, openvino_version(name->version));
      break;
    case Versioning::kNone:
    case Versioning::kComponent:
      break;
  }
  id.product = product;
  if (k->component.empty()) {
    id.what = product;
  } else if (k->versioning == Versioning::kComponent && !major.empty()) {
    id.what = fmt::format("{}'s {} {}", product, k->component, major);
  } else {
    id.what = fmt::format("{}'s {}", product, k->component);
  }
  id.driver = k->driver;
  id.known = true;
  return id;
}

std::string missing_libraries_words(const std::vector<std::string>& files) {
  // One clause per product, in the order its first file came.
  std::vector<std::pair<LibraryIdentity, std::vector<std::string>>> groups;
  for (const auto& f : files) {
    LibraryIdentity id = identify_library(f);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first.known && id.known && g.first.product == id.product; });
    if (it == groups.end()) {
      groups.push_back({id, {f}});
    } else {
      it->second.push_back(f);
    }
  }
  std::string out;
  for (const auto& [id, names] : groups) {
    if (!out.empty()) out += "; ";
    if (!id.known) {
      out += fmt::format("{} not found", id.file);
    } else {
      out += fmt::format("{} ({}) {}", id.product, fmt::join(names, ", "), id.driver ? "is not installed" : "not found");
    }
  }
  return out;
}

std::string other_version_words(std::string_view needed, std::string_view found) {
  LibraryIdentity want = identify_library(needed);
  LibraryIdentity have = identify_library(found);
  if (!want.known || want.product == have.product) return fmt::format("found {}, but this build needs {}", found, needed);
  return fmt::format("found {} ({}), but this build needs {} ({})", found, have.product, want.product, needed);
}

std::string lacking_versions_words(std::string_view file, std::string_view path, const std::vector<std::string>& versions,
                                   std::string_view needed_by) {
  return fmt::format("found {} ({}), but it lacks {} that {} needs", identify_library(file).what, path, fmt::join(versions, ", "),
                     needed_by);
}

}  // namespace rung
