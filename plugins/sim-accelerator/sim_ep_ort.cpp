#include "sim_ep_ort.h"

#include <memory>

namespace rung::sim_ep {

std::vector<const OrtNode*> graph_nodes(const Apis& apis, const OrtGraph* graph) {
  size_t n = 0;
  check(apis.ort->Graph_GetNumNodes(graph, &n));
  std::vector<const OrtNode*> nodes(n, nullptr);
  if (n) check(apis.ort->Graph_GetNodes(graph, nodes.data(), n));
  return nodes;
}

std::string node_op_type(const Apis& apis, const OrtNode* node) {
  const char* s = nullptr;
  check(apis.ort->Node_GetOperatorType(node, &s));
  return s ? s : "";
}

std::string node_domain(const Apis& apis, const OrtNode* node) {
  const char* s = nullptr;
  check(apis.ort->Node_GetDomain(node, &s));
  return s ? s : "";
}

std::string node_name(const Apis& apis, const OrtNode* node) {
  const char* s = nullptr;
  check(apis.ort->Node_GetName(node, &s));
  return s ? s : "";
}

std::vector<const OrtValueInfo*> node_inputs(const Apis& apis, const OrtNode* node) {
  size_t n = 0;
  check(apis.ort->Node_GetNumInputs(node, &n));
  std::vector<const OrtValueInfo*> values(n, nullptr);
  if (n) check(apis.ort->Node_GetInputs(node, values.data(), n));
  return values;
}

std::vector<const OrtValueInfo*> node_outputs(const Apis& apis, const OrtNode* node) {
  size_t n = 0;
  check(apis.ort->Node_GetNumOutputs(node, &n));
  std::vector<const OrtValueInfo*> values(n, nullptr);
  if (n) check(apis.ort->Node_GetOutputs(node, values.data(), n));
  return values;
}

std::string value_name(const Apis& apis, const OrtValueInfo* value) {
  const char* s = nullptr;
  check(apis.ort->GetValueInfoName(value, &s));
  return s ? s : "";
}

static TensorDesc describe(const Apis& apis, const OrtTensorTypeAndShapeInfo* info) {
  TensorDesc d;
  check(apis.ort->GetTensorElementType(info, &d.elem_type));
  size_t rank = 0;
  check(apis.ort->GetDimensionsCount(info, &rank));
  d.shape.assign(rank, -1);
  if (rank) check(apis.ort->GetDimensions(info, d.shape.data(), rank));
  return d;
}

std::optional<TensorDesc> value_tensor_desc(const Apis& apis, const OrtValueInfo* value) {
  if (value == nullptr) return std::nullopt;
  const OrtTypeInfo* type_info = nullptr;
  if (OrtStatus* st = apis.ort->GetValueInfoTypeInfo(value, &type_info)) {
    apis.ort->ReleaseStatus(st);
    return std::nullopt;
  }
  if (type_info == nullptr) return std::nullopt;
  ONNXType onnx_type = ONNX_TYPE_UNKNOWN;
  check(apis.ort->GetOnnxTypeFromTypeInfo(type_info, &onnx_type));
  if (onnx_type != ONNX_TYPE_TENSOR) return std::nullopt;
  const OrtTensorTypeAndShapeInfo* tensor_info = nullptr;
  check(apis.ort->CastTypeInfoToTensorInfo(type_info, &tensor_info));
  if (tensor_info == nullptr) return std::nullopt;
  return describe(apis, tensor_info);
}

std::optional<std::string> string_attribute(const Apis& apis, const OrtNode* node, const char* name) {
  const OrtOpAttr* attr = nullptr;
  if (OrtStatus* st = apis.ort->Node_GetAttributeByName(node, name, &attr)) {
    apis.ort->ReleaseStatus(st);  // ORT_NOT_FOUND for a missing attribute
    return std::nullopt;
  }
  if (attr == nullptr) return std::nullopt;
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  check(apis.ort->OpAttr_GetType(attr, &type));
  if (type != ORT_OP_ATTR_STRING) return std::nullopt;
  size_t size = 0;
  // The first call reports the required size (failing when it is not zero).
  if (OrtStatus* st = apis.ort->ReadOpAttr(attr, ORT_OP_ATTR_STRING, nullptr, 0, &size)) apis.ort->ReleaseStatus(st);
  std::string value(size, '\0');
  if (size) check(apis.ort->ReadOpAttr(attr, ORT_OP_ATTR_STRING, value.data(), size, &size));
  value.resize(size);
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::optional<std::string> session_config(const Apis& apis, const OrtSessionOptions* options, const std::string& key) {
  int has = 0;
  check(apis.ort->HasSessionConfigEntry(options, key.c_str(), &has));
  if (!has) return std::nullopt;
  size_t size = 0;
  check(apis.ort->GetSessionConfigEntry(options, key.c_str(), nullptr, &size));
  std::string value(size, '\0');
  check(apis.ort->GetSessionConfigEntry(options, key.c_str(), value.data(), &size));
  if (!value.empty() && value.back() == '\0') value.pop_back();  // size includes the terminator
  return value;
}

TensorDesc value_desc(const Apis& apis, const OrtValue* value) {
  OrtTensorTypeAndShapeInfo* raw = nullptr;
  check(apis.ort->GetTensorTypeAndShape(value, &raw));
  auto release = [&apis](OrtTensorTypeAndShapeInfo* p) { apis.ort->ReleaseTensorTypeAndShapeInfo(p); };
  std::unique_ptr<OrtTensorTypeAndShapeInfo, decltype(release)> info(raw, release);
  return describe(apis, info.get());
}

}  // namespace rung::sim_ep
