// Thin helpers over the ONNX Runtime C API used by the simulated accelerator.
//
// The plugin deliberately uses only the C API (no Ort:: C++ wrappers), so that every OrtApi / OrtEpApi entry it
// touches is visible here; all of them exist in API version 23 and later, so the library works with every runtime
// that hands out API 28 (ONNX Runtime 1.28) and newer.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "sim_ep_kernels.h"

namespace rung::sim_ep {

struct Apis {
  const OrtApi* ort = nullptr;
  const OrtEpApi* ep = nullptr;
  const OrtModelEditorApi* editor = nullptr;  // null if the runtime build has no model editor API
  uint32_t version = 0;                       // the OrtApi version obtained from the runtime
};

// An OrtStatus travelling as a C++ exception inside the plugin; converted back at the C boundary.
struct StatusError {
  OrtStatus* status;
};

inline void check(OrtStatus* status) {
  if (status != nullptr) throw StatusError{status};
}

[[noreturn]] inline void fail(const Apis& apis, OrtErrorCode code, const std::string& message) {
  throw StatusError{apis.ort->CreateStatus(code, message.c_str())};
}

// Runs `f` and converts any exception into an OrtStatus (nullptr on success).
template <typename F>
OrtStatus* guarded(const Apis& apis, F&& f) noexcept {
  try {
    f();
    return nullptr;
  } catch (const StatusError& e) {
    return e.status;
  } catch (const std::exception& e) {
    return apis.ort->CreateStatus(ORT_EP_FAIL, (std::string("RungSimAccelerator: ") + e.what()).c_str());
  } catch (...) {
    return apis.ort->CreateStatus(ORT_EP_FAIL, "RungSimAccelerator: unknown exception");
  }
}

struct TensorDesc {
  ONNXTensorElementDataType elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  Shape shape;  // -1 for unknown dimensions
};

std::vector<const OrtNode*> graph_nodes(const Apis& apis, const OrtGraph* graph);
std::string node_op_type(const Apis& apis, const OrtNode* node);
std::string node_domain(const Apis& apis, const OrtNode* node);
std::string node_name(const Apis& apis, const OrtNode* node);
// Entries may be null for omitted optional inputs/outputs.
std::vector<const OrtValueInfo*> node_inputs(const Apis& apis, const OrtNode* node);
std::vector<const OrtValueInfo*> node_outputs(const Apis& apis, const OrtNode* node);
std::string value_name(const Apis& apis, const OrtValueInfo* value);
// nullopt if the value is not a tensor or carries no type information.
std::optional<TensorDesc> value_tensor_desc(const Apis& apis, const OrtValueInfo* value);
// nullopt if the node has no such attribute.
std::optional<std::string> string_attribute(const Apis& apis, const OrtNode* node, const char* name);

// Session configuration entry, nullopt if absent.
std::optional<std::string> session_config(const Apis& apis, const OrtSessionOptions* options, const std::string& key);

// Element type and shape of a runtime tensor value.
TensorDesc value_desc(const Apis& apis, const OrtValue* value);

}  // namespace rung::sim_ep
