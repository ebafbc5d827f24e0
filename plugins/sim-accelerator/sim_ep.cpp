// RungSimAccelerator: a simulated accelerator built as a real ONNX Runtime plugin execution provider.
//
// It claims float element-wise nodes and, when asked, two-dimensional MatMuls (configurable op types), compiles each
// into its own fused node and computes it on the CPU, optionally perturbing results, reusing an output whose inputs
// did not change, failing, aborting, hanging or sleeping at chosen stages (see sim_ep_knobs.h). The library exports
// only CreateEpFactories and ReleaseEpFactory.

#include <onnxruntime_c_api.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim_ep_kernels.h"
#include "sim_ep_knobs.h"
#include "sim_ep_memo.h"
#include "sim_ep_ort.h"

// The two entry points ONNX Runtime looks up; the Windows build names them in
// sim_ep.def instead (its CMakeLists.txt), and defines this as plain C linkage.
#ifndef RUNG_SIM_EP_EXPORT
#define RUNG_SIM_EP_EXPORT extern "C" __attribute__((visibility("default")))
#endif

namespace rung::sim_ep {
namespace {

constexpr const char* kEpContextOp = "EPContext";
constexpr const char* kEpContextDomain = "com.microsoft";
constexpr const char* kCacheHeader = "rung-sim-ep-context 1";

// Everything a compiled node needs at compute time.
struct CompiledNode {
  OpKind op = OpKind::Add;
  std::vector<size_t> inputs;  // for each op input, its index among the fused node's inputs
  std::vector<bool> constant;  // for each op input, whether it is a constant initializer (read at compile)
  float perturb = 0.0f;
  std::string name;  // fused node name
};

// ep_cache_context payload: what the simulated "engine" bakes in.
std::string serialize_cache(const CompiledNode& node) {
  std::string s = kCacheHeader;
  s += "\nop=";
  s += op_kind_name(node.op);
  s += "\ninputs=";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(node.inputs[i]);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(node.perturb));
  s += "\nperturb=";
  s += buf;
  s += "\n";
  return s;
}

std::optional<CompiledNode> parse_cache(const std::string& text) {
  CompiledNode node;
  bool header = false, have_op = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line == kCacheHeader) {
      header = true;
    } else if (line.rfind("op=", 0) == 0) {
      auto op = op_kind_from_name(line.substr(3));
      if (!op) return std::nullopt;
      node.op = *op;
      have_op = true;
    } else if (line.rfind("inputs=", 0) == 0) {
      std::string_view list = std::string_view(line).substr(7);
      while (!list.empty()) {
        size_t v = 0;
        auto [ptr, ec] = std::from_chars(list.data(), list.data() + list.size(), v);
        if (ec != std::errc()) return std::nullopt;
        node.inputs.push_back(v);
        list.remove_prefix(static_cast<size_t>(ptr - list.data()));
        if (!list.empty() && list.front() == ',') list.remove_prefix(1);
      }
    } else if (line.rfind("perturb=", 0) == 0) {
      node.perturb = std::strtof(line.c_str() + 8, nullptr);
    }
  }
  if (!header || !have_op || node.inputs.size() != (is_binary(node.op) ? 2u : 1u)) return std::nullopt;
  return node;
}

struct SimEp : OrtEp {
  SimEp(const Apis& apis, Knobs knobs, bool ep_context_enabled, const OrtLogger* logger);

  const Apis& apis;  // owned by the factory, which outlives its EPs
  const Knobs knobs;
  const bool ep_context_enabled;  // session asked for EPContext nodes ("ep.context_enable" = "1")
  const OrtLogger* logger;

  void log(OrtLoggingLevel level, const std::string& message) const {
    if (logger == nullptr) return;
    if (OrtStatus* st = apis.ort->Logger_LogMessage(logger, level, message.c_str(), ORT_FILE, __LINE__, "SimEp"))
      apis.ort->ReleaseStatus(st);
  }

  bool claims(const OrtNode* node) const;
  CompiledNode compile_one(const OrtGraph* graph, const OrtNode* fused_node) const;
  OrtNode* make_ep_context_node(const OrtNode* fused_node, const CompiledNode& compiled) const;

  static const char* ORT_API_CALL GetNameImpl(const OrtEp* self) noexcept;
  static OrtStatus* ORT_API_CALL GetCapabilityImpl(OrtEp* self, const OrtGraph* graph,
                                                   OrtEpGraphSupportInfo* support) noexcept;
  static OrtStatus* ORT_API_CALL CompileImpl(OrtEp* self, const OrtGraph** graphs, const OrtNode** fused_nodes,
                                             size_t count, OrtNodeComputeInfo** compute_infos,
                                             OrtNode** ep_context_nodes) noexcept;
  static void ORT_API_CALL ReleaseNodeComputeInfosImpl(OrtEp* self, OrtNodeComputeInfo** infos, size_t count) noexcept;
  static const char* ORT_API_CALL GetCompiledModelCompatibilityInfoImpl(OrtEp* self, const OrtGraph* graph) noexcept;

  std::string compatibility;  // storage for GetCompiledModelCompatibilityInfo's answer
};

struct SimComputeInfo : OrtNodeComputeInfo {
  SimComputeInfo(const SimEp& ep, CompiledNode node);

  const SimEp& ep;
  const CompiledNode node;
  mutable Memo memo;  // the `memoise` knob's last inputs and output

  OrtStatus* compute(OrtKernelContext* context) const;

  static OrtStatus* ORT_API_CALL CreateStateImpl(OrtNodeComputeInfo* self, OrtNodeComputeContext* context,
                                                 void** state) noexcept;
  static OrtStatus* ORT_API_CALL ComputeImpl(OrtNodeComputeInfo* self, void* state, OrtKernelContext* context) noexcept;
  static void ORT_API_CALL ReleaseStateImpl(OrtNodeComputeInfo* self, void* state) noexcept;
};

struct SimFactory : OrtEpFactory {
  SimFactory(const Apis& apis, std::string registration_name);

  const Apis apis;
  const std::string registration_name;

  static const char* ORT_API_CALL GetNameImpl(const OrtEpFactory* self) noexcept;
  static const char* ORT_API_CALL GetVendorImpl(const OrtEpFactory* self) noexcept;
  static uint32_t ORT_API_CALL GetVendorIdImpl(const OrtEpFactory* self) noexcept;
  static const char* ORT_API_CALL GetVersionImpl(const OrtEpFactory* self) noexcept;
  static bool ORT_API_CALL IsStreamAwareImpl(const OrtEpFactory* self) noexcept;
  static OrtStatus* ORT_API_CALL GetSupportedDevicesImpl(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                                                         size_t num_devices, OrtEpDevice** ep_devices,
                                                         size_t max_ep_devices, size_t* num_ep_devices) noexcept;
  static OrtStatus* ORT_API_CALL CreateEpImpl(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                                              const OrtKeyValuePairs* const* ep_metadata, size_t num_devices,
                                              const OrtSessionOptions* session_options, const OrtLogger* logger,
                                              OrtEp** ep) noexcept;
  static void ORT_API_CALL ReleaseEpImpl(OrtEpFactory* self, OrtEp* ep) noexcept;
  static OrtStatus* ORT_API_CALL ValidateCompiledModelCompatibilityInfoImpl(
      OrtEpFactory* self, const OrtHardwareDevice* const* devices, size_t num_devices, const char* compatibility_info,
      OrtCompiledModelCompatibility* model_compatibility) noexcept;
  static OrtStatus* ORT_API_CALL CreateAllocatorImpl(OrtEpFactory* self, const OrtMemoryInfo* memory_info,
                                                     const OrtKeyValuePairs* allocator_options,
                                                     OrtAllocator** allocator) noexcept;
  static void ORT_API_CALL ReleaseAllocatorImpl(OrtEpFactory* self, OrtAllocator* allocator) noexcept;
  static OrtStatus* ORT_API_CALL CreateDataTransferImpl(OrtEpFactory* self,
                                                        OrtDataTransferImpl** data_transfer) noexcept;
  static OrtStatus* ORT_API_CALL CreateSyncStreamForDeviceImpl(OrtEpFactory* self, const OrtMemoryDevice* device,
                                                               const OrtKeyValuePairs* stream_options,
                                                               OrtSyncStreamImpl** stream) noexcept;
  static OrtStatus* ORT_API_CALL GetHardwareDeviceIncompatibilityDetailsImpl(
      OrtEpFactory* self, const OrtHardwareDevice* hw, OrtDeviceEpIncompatibilityDetails* details) noexcept;
  static OrtStatus* ORT_API_CALL CreateExternalResourceImporterForDeviceImpl(
      OrtEpFactory* self, const OrtEpDevice* ep_device, OrtExternalResourceImporterImpl** importer) noexcept;
  static OrtStatus* ORT_API_CALL GetNumCustomOpDomainsImpl(OrtEpFactory* self, size_t* num_domains) noexcept;
  static OrtStatus* ORT_API_CALL GetCustomOpDomainsImpl(OrtEpFactory* self, OrtCustomOpDomain** domains,
                                                        size_t num_domains) noexcept;
};

// What GetCompiledModelCompatibilityInfo reports for models compiled by this build of the simulator.
std::string compatibility_info() { return std::string(kEpName) + ";version=" + kEpVersion + ";cache=1"; }

//
// SimEp
//

SimEp::SimEp(const Apis& a, Knobs k, bool ep_context, const OrtLogger* l)
    : OrtEp{}, apis(a), knobs(std::move(k)), ep_context_enabled(ep_context), logger(l) {
  ort_version_supported = apis.version;  // never promise more than the runtime we were handed
  GetName = GetNameImpl;
  GetCapability = GetCapabilityImpl;
  Compile = CompileImpl;
  ReleaseNodeComputeInfos = ReleaseNodeComputeInfosImpl;
  GetCompiledModelCompatibilityInfo = GetCompiledModelCompatibilityInfoImpl;
  compatibility = compatibility_info();
}

const char* ORT_API_CALL SimEp::GetNameImpl(const OrtEp*) noexcept { return kEpName; }

const char* ORT_API_CALL SimEp::GetCompiledModelCompatibilityInfoImpl(OrtEp* self, const OrtGraph*) noexcept {
  return static_cast<SimEp*>(self)->compatibility.c_str();
}

bool SimEp::claims(const OrtNode* node) const {
  const std::string op_type = node_op_type(apis, node);
  const std::string domain = node_domain(apis, node);
  if (op_type == kEpContextOp && domain == kEpContextDomain)
    return string_attribute(apis, node, "source") == std::optional<std::string>(kEpName);
  if (!domain.empty() && domain != "ai.onnx") return false;
  const auto op = op_kind_from_name(op_type);
  if (!op || !knobs.ops.count(*op)) return false;

  const auto inputs = node_inputs(apis, node);
  const auto outputs = node_outputs(apis, node);
  if (inputs.size() != (is_binary(*op) ? 2u : 1u) || outputs.size() != 1) return false;
  std::vector<TensorDesc> descs;
  for (const OrtValueInfo* v : inputs) {
    auto d = value_tensor_desc(apis, v);
    if (!d || d->elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return false;
    descs.push_back(std::move(*d));
  }
  auto out = value_tensor_desc(apis, outputs[0]);
  if (!out || out->elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return false;
  // Refuse only shapes known not to fit (element-wise binary ops broadcast generally; MatMul is [M,K] x [K,N]).
  std::vector<Shape> shapes;
  for (const auto& d : descs) shapes.push_back(d.shape);
  return output_shape(*op, shapes).has_value();
}

OrtStatus* ORT_API_CALL SimEp::GetCapabilityImpl(OrtEp* self, const OrtGraph* graph,
                                                 OrtEpGraphSupportInfo* support) noexcept {
  auto* ep = static_cast<SimEp*>(self);
  return guarded(ep->apis, [&] {
    if (simulate_stage(ep->knobs, Stage::GetCapability))
      fail(ep->apis, ORT_EP_FAIL, stage_failure_message(Stage::GetCapability));
    OrtNodeFusionOptions fusion{};
    fusion.ort_version_supported = ep->apis.version;
    fusion.drop_constant_initializers = false;  // ORT passes initializers as fused-node inputs
    size_t claimed = 0;
    for (const OrtNode* node : graph_nodes(ep->apis, graph)) {
      if (!ep->claims(node)) continue;
      // Each claimed node becomes its own fused (compiled) node.
      check(ep->apis.ep->EpGraphSupportInfo_AddNodesToFuse(support, &node, 1, &fusion));
      ++claimed;
    }
    ep->log(ORT_LOGGING_LEVEL_INFO, std::string(kEpName) + " claimed " + std::to_string(claimed) + " node(s)");
  });
}

CompiledNode SimEp::compile_one(const OrtGraph* graph, const OrtNode* fused_node) const {
  const auto nodes = graph_nodes(apis, graph);
  if (nodes.size() != 1)
    fail(apis, ORT_EP_FAIL,
         "RungSimAccelerator: expected one node per fused graph, got " + std::to_string(nodes.size()));
  const OrtNode* node = nodes[0];
  const std::string op_type = node_op_type(apis, node);

  CompiledNode compiled;
  compiled.name = node_name(apis, fused_node);
  compiled.perturb = knobs.perturb;
  std::vector<std::string> fused_inputs;
  for (const OrtValueInfo* v : node_inputs(apis, fused_node)) fused_inputs.push_back(v ? value_name(apis, v) : "");

  // The op's inputs, each to be found by name among the fused node's inputs.
  std::vector<const OrtValueInfo*> op_inputs;
  const auto inputs = node_inputs(apis, node);
  if (op_type == kEpContextOp && node_domain(apis, node) == kEpContextDomain) {
    const auto cache = string_attribute(apis, node, "ep_cache_context");
    auto restored = cache ? parse_cache(*cache) : std::nullopt;
    if (!restored)
      fail(apis, ORT_INVALID_GRAPH,
           "RungSimAccelerator: EPContext node '" + node_name(apis, node) + "' has no valid ep_cache_context");
    compiled.op = restored->op;
    compiled.perturb = restored->perturb;  // baked into the "engine" when it was built
    for (size_t idx : restored->inputs) {
      if (idx >= inputs.size() || inputs[idx] == nullptr)
        fail(apis, ORT_INVALID_GRAPH, "RungSimAccelerator: ep_cache_context refers to a missing input");
      op_inputs.push_back(inputs[idx]);
    }
  } else {
    const auto op = op_kind_from_name(op_type);
    if (!op) fail(apis, ORT_EP_FAIL, "RungSimAccelerator: asked to compile unsupported op " + op_type);
    compiled.op = *op;
    op_inputs = inputs;
  }
  for (const OrtValueInfo* v : op_inputs) {
    const std::string name = v ? value_name(apis, v) : "";
    auto it = std::find(fused_inputs.begin(), fused_inputs.end(), name);
    if (name.empty() || it == fused_inputs.end())
      fail(apis, ORT_EP_FAIL,
           "RungSimAccelerator: input '" + name + "' is not an input of fused node " + compiled.name);
    compiled.inputs.push_back(static_cast<size_t>(it - fused_inputs.begin()));
    bool constant = false;
    check(apis.ort->ValueInfo_IsConstantInitializer(v, &constant));
    compiled.constant.push_back(constant);
  }
  return compiled;
}

OrtNode* SimEp::make_ep_context_node(const OrtNode* fused_node, const CompiledNode& compiled) const {
  if (apis.editor == nullptr)
    fail(apis, ORT_NOT_IMPLEMENTED, "RungSimAccelerator: this runtime has no model editor API for EPContext nodes");
  std::vector<std::string> in_names, out_names;
  for (const OrtValueInfo* v : node_inputs(apis, fused_node)) in_names.push_back(v ? value_name(apis, v) : "");
  for (const OrtValueInfo* v : node_outputs(apis, fused_node)) out_names.push_back(v ? value_name(apis, v) : "");
  std::vector<const char*> in_c, out_c;
  for (auto& s : in_names) in_c.push_back(s.c_str());
  for (auto& s : out_names) out_c.push_back(s.c_str());

  const std::string cache = serialize_cache(compiled);
  const int64_t one = 1;
  // CreateNode takes the attributes over: it releases each one it consumed and nulls its slot in our array
  // (although the header says they are copied), so whatever is still non-null afterwards is ours to release.
  std::vector<OrtOpAttr*> attrs;
  struct ReleaseLeftovers {
    const Apis& apis;
    std::vector<OrtOpAttr*>& attrs;
    ~ReleaseLeftovers() {
      for (OrtOpAttr* a : attrs)
        if (a != nullptr) apis.ort->ReleaseOpAttr(a);
    }
  } release_leftovers{apis, attrs};
  auto add = [&](const char* name, const void* data, int len, OrtOpAttrType type) {
    OrtOpAttr* a = nullptr;
    check(apis.ort->CreateOpAttr(name, data, len, type, &a));
    attrs.push_back(a);
  };
  add("ep_cache_context", cache.data(), static_cast<int>(cache.size()), ORT_OP_ATTR_STRING);
  add("embed_mode", &one, 1, ORT_OP_ATTR_INT);
  add("main_context", &one, 1, ORT_OP_ATTR_INT);
  add("source", kEpName, static_cast<int>(std::char_traits<char>::length(kEpName)), ORT_OP_ATTR_STRING);
  add("ep_sdk_version", kEpVersion, static_cast<int>(std::char_traits<char>::length(kEpVersion)), ORT_OP_ATTR_STRING);
  add("partition_name", compiled.name.data(), static_cast<int>(compiled.name.size()), ORT_OP_ATTR_STRING);

  OrtNode* node = nullptr;  // ORT takes ownership of the returned node
  check(apis.editor->CreateNode(kEpContextOp, kEpContextDomain, compiled.name.c_str(), in_c.data(), in_c.size(),
                                out_c.data(), out_c.size(), attrs.data(), attrs.size(), &node));
  return node;
}

OrtStatus* ORT_API_CALL SimEp::CompileImpl(OrtEp* self, const OrtGraph** graphs, const OrtNode** fused_nodes,
                                           size_t count, OrtNodeComputeInfo** compute_infos,
                                           OrtNode** ep_context_nodes) noexcept {
  auto* ep = static_cast<SimEp*>(self);
  return guarded(ep->apis, [&] {
    if (ep->knobs.compile_delay_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(ep->knobs.compile_delay_ms));
    if (simulate_stage(ep->knobs, Stage::Compile)) fail(ep->apis, ORT_EP_FAIL, stage_failure_message(Stage::Compile));

    std::vector<std::unique_ptr<SimComputeInfo>> infos;
    for (size_t i = 0; i < count; ++i) {
      for (const OrtNode* inner : graph_nodes(ep->apis, graphs[i])) {
        const std::string inner_name = node_name(ep->apis, inner);
        for (const auto& reject : ep->knobs.reject_nodes) {
          if (inner_name.find(reject) != std::string::npos)
            fail(ep->apis, ORT_EP_FAIL, "RungSimAccelerator: the compiler rejects node '" + inner_name + "'");
        }
      }
      CompiledNode compiled = ep->compile_one(graphs[i], fused_nodes[i]);
      trace(ep->knobs, "compile", std::string(op_kind_name(compiled.op)) + " " + compiled.name);
      if (ep->ep_context_enabled && ep_context_nodes != nullptr)
        ep_context_nodes[i] = ep->make_ep_context_node(fused_nodes[i], compiled);
      infos.push_back(std::make_unique<SimComputeInfo>(*ep, std::move(compiled)));
    }
    for (size_t i = 0; i < count; ++i) compute_infos[i] = infos[i].release();
  });
}

void ORT_API_CALL SimEp::ReleaseNodeComputeInfosImpl(OrtEp*, OrtNodeComputeInfo** infos, size_t count) noexcept {
  for (size_t i = 0; i < count; ++i) delete static_cast<SimComputeInfo*>(infos[i]);
}

//
// SimComputeInfo
//

SimComputeInfo::SimComputeInfo(const SimEp& e, CompiledNode n) : OrtNodeComputeInfo{}, ep(e), node(std::move(n)) {
  ort_version_supported = ep.apis.version;
  CreateState = CreateStateImpl;
  Compute = ComputeImpl;
  ReleaseState = ReleaseStateImpl;
}

OrtStatus* ORT_API_CALL SimComputeInfo::CreateStateImpl(OrtNodeComputeInfo* self, OrtNodeComputeContext*,
                                                        void** state) noexcept {
  *state = self;  // the compiled node is immutable, so it is its own state
  return nullptr;
}

OrtStatus* ORT_API_CALL SimComputeInfo::ComputeImpl(OrtNodeComputeInfo* self, void*,
                                                    OrtKernelContext* context) noexcept {
  return static_cast<SimComputeInfo*>(self)->compute(context);
}

void ORT_API_CALL SimComputeInfo::ReleaseStateImpl(OrtNodeComputeInfo*, void*) noexcept {}

OrtStatus* SimComputeInfo::compute(OrtKernelContext* context) const {
  const Apis& apis = ep.apis;
  return guarded(apis, [&] {
    const Knobs& knobs = ep.knobs;
    if (simulate_stage(knobs, Stage::Compute)) fail(apis, ORT_EP_FAIL, stage_failure_message(Stage::Compute));
    if (knobs.compute_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(knobs.compute_delay_us));

    size_t num_inputs = 0;
    check(apis.ort->KernelContext_GetInputCount(context, &num_inputs));
    std::vector<InputView> inputs;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const size_t idx = node.inputs[k];
      if (idx >= num_inputs)
        fail(apis, ORT_EP_FAIL,
             "RungSimAccelerator: fused node " + node.name + " is missing input " + std::to_string(idx));
      const OrtValue* value = nullptr;
      check(apis.ort->KernelContext_GetInput(context, idx, &value));
      TensorDesc desc = value_desc(apis, value);
      if (desc.elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)
        fail(apis, ORT_INVALID_ARGUMENT, "RungSimAccelerator: " + node.name + " expects float tensors");
      const void* p = nullptr;
      check(apis.ort->GetTensorData(value, &p));
      const size_t bytes = element_count(desc.shape) * sizeof(float);
      inputs.push_back({p, bytes, std::move(desc.shape), node.constant[k]});
    }
    auto output = [&](const Shape& shape) {
      OrtValue* out = nullptr;
      check(apis.ort->KernelContext_GetOutput(context, 0, shape.data(), shape.size(), &out));
      void* out_data = nullptr;
      check(apis.ort->GetTensorMutableData(out, &out_data));
      return static_cast<float*>(out_data);
    };
    const std::string what = std::string(op_kind_name(node.op)) + " " + node.name;
    if (knobs.memoise && memo.reuse(inputs, output)) {
      trace(knobs, "reuse", what);
      return;
    }
    trace(knobs, "compute", what);

    std::vector<Shape> shapes;
    for (const auto& in : inputs) shapes.push_back(in.shape);
    const auto out_shape = output_shape(node.op, shapes);
    if (!out_shape)
      fail(apis, ORT_INVALID_ARGUMENT,
           "RungSimAccelerator: " + std::string(op_kind_name(node.op)) + " cannot take " + shape_to_string(shapes[0]) +
               " with " + shape_to_string(shapes.back()));
    float* y = output(*out_shape);
    const auto* a = static_cast<const float*>(inputs[0].data);
    if (node.op == OpKind::MatMul) {
      const auto* b = static_cast<const float*>(inputs[1].data);
      run_matmul(a, b, y, static_cast<size_t>(shapes[0][0]), static_cast<size_t>(shapes[0][1]),
                 static_cast<size_t>(shapes[1][1]), node.perturb);
    } else if (is_binary(node.op)) {
      run_binary(node.op, a, shapes[0], static_cast<const float*>(inputs[1].data), shapes[1], y, *out_shape, node.perturb);
    } else {
      run_unary(node.op, a, y, element_count(*out_shape), node.perturb);
    }
    if (knobs.memoise) memo.store(inputs, *out_shape, y, element_count(*out_shape));
  });
}

//
// SimFactory
//

SimFactory::SimFactory(const Apis& a, std::string name) : OrtEpFactory{}, apis(a), registration_name(std::move(name)) {
  ort_version_supported = apis.version;
  GetName = GetNameImpl;
  GetVendor = GetVendorImpl;
  GetSupportedDevices = GetSupportedDevicesImpl;
  CreateEp = CreateEpImpl;
  ReleaseEp = ReleaseEpImpl;
  GetVendorId = GetVendorIdImpl;
  GetVersion = GetVersionImpl;
  // ONNX Runtime calls several of the later entries without checking them for null (1.30 calls CreateDataTransfer
  // at registration), so every entry up to API 24 is filled in, with "nothing to offer" answers.
  ValidateCompiledModelCompatibilityInfo = ValidateCompiledModelCompatibilityInfoImpl;
  CreateAllocator = CreateAllocatorImpl;
  ReleaseAllocator = ReleaseAllocatorImpl;
  CreateDataTransfer = CreateDataTransferImpl;
  IsStreamAware = IsStreamAwareImpl;
  CreateSyncStreamForDevice = CreateSyncStreamForDeviceImpl;
  GetHardwareDeviceIncompatibilityDetails = GetHardwareDeviceIncompatibilityDetailsImpl;
  CreateExternalResourceImporterForDevice = CreateExternalResourceImporterForDeviceImpl;
  GetNumCustomOpDomains = GetNumCustomOpDomainsImpl;
  GetCustomOpDomains = GetCustomOpDomainsImpl;
}

const char* ORT_API_CALL SimFactory::GetNameImpl(const OrtEpFactory*) noexcept { return kEpName; }
const char* ORT_API_CALL SimFactory::GetVendorImpl(const OrtEpFactory*) noexcept { return kVendor; }
uint32_t ORT_API_CALL SimFactory::GetVendorIdImpl(const OrtEpFactory*) noexcept { return 0; }
const char* ORT_API_CALL SimFactory::GetVersionImpl(const OrtEpFactory*) noexcept { return kEpVersion; }
bool ORT_API_CALL SimFactory::IsStreamAwareImpl(const OrtEpFactory*) noexcept { return false; }

OrtStatus* ORT_API_CALL SimFactory::ValidateCompiledModelCompatibilityInfoImpl(
    OrtEpFactory*, const OrtHardwareDevice* const*, size_t, const char* info,
    OrtCompiledModelCompatibility* compatibility) noexcept {
  const std::string text = info ? info : "";
  if (text == compatibility_info())
    *compatibility = OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL;
  else if (text.rfind(std::string(kEpName) + ";", 0) == 0)
    *compatibility = OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION;
  else
    *compatibility = OrtCompiledModelCompatibility_EP_UNSUPPORTED;
  return nullptr;
}

// The simulator computes in host memory: ORT's default CPU allocator, no data transfer, no streams.
OrtStatus* ORT_API_CALL SimFactory::CreateAllocatorImpl(OrtEpFactory*, const OrtMemoryInfo*, const OrtKeyValuePairs*,
                                                        OrtAllocator** allocator) noexcept {
  *allocator = nullptr;
  return nullptr;
}
void ORT_API_CALL SimFactory::ReleaseAllocatorImpl(OrtEpFactory*, OrtAllocator*) noexcept {}
OrtStatus* ORT_API_CALL SimFactory::CreateDataTransferImpl(OrtEpFactory*, OrtDataTransferImpl** transfer) noexcept {
  *transfer = nullptr;
  return nullptr;
}
OrtStatus* ORT_API_CALL SimFactory::CreateSyncStreamForDeviceImpl(OrtEpFactory*, const OrtMemoryDevice*,
                                                                  const OrtKeyValuePairs*,
                                                                  OrtSyncStreamImpl** stream) noexcept {
  *stream = nullptr;
  return nullptr;
}
OrtStatus* ORT_API_CALL SimFactory::GetHardwareDeviceIncompatibilityDetailsImpl(
    OrtEpFactory*, const OrtHardwareDevice*, OrtDeviceEpIncompatibilityDetails*) noexcept {
  return nullptr;  // compatible with every device it was offered
}
OrtStatus* ORT_API_CALL SimFactory::CreateExternalResourceImporterForDeviceImpl(
    OrtEpFactory*, const OrtEpDevice*, OrtExternalResourceImporterImpl** importer) noexcept {
  *importer = nullptr;
  return nullptr;
}
OrtStatus* ORT_API_CALL SimFactory::GetNumCustomOpDomainsImpl(OrtEpFactory*, size_t* num_domains) noexcept {
  *num_domains = 0;
  return nullptr;
}
OrtStatus* ORT_API_CALL SimFactory::GetCustomOpDomainsImpl(OrtEpFactory*, OrtCustomOpDomain**, size_t) noexcept {
  return nullptr;
}

OrtStatus* ORT_API_CALL SimFactory::GetSupportedDevicesImpl(OrtEpFactory* self, const OrtHardwareDevice* const* devices,
                                                            size_t num_devices, OrtEpDevice** ep_devices,
                                                            size_t max_ep_devices, size_t* num_ep_devices) noexcept {
  auto* factory = static_cast<SimFactory*>(self);
  *num_ep_devices = 0;
  return guarded(factory->apis, [&] {
    // One OrtEpDevice, on the (first) CPU hardware device: the simulator computes in host memory.
    for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; ++i) {
      if (factory->apis.ort->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
      OrtEpDevice* ep_device = nullptr;
      check(factory->apis.ep->CreateEpDevice(factory, devices[i], nullptr, nullptr, &ep_device));
      ep_devices[(*num_ep_devices)++] = ep_device;
      break;
    }
  });
}

OrtStatus* ORT_API_CALL SimFactory::CreateEpImpl(OrtEpFactory* self, const OrtHardwareDevice* const*,
                                                 const OrtKeyValuePairs* const*, size_t num_devices,
                                                 const OrtSessionOptions* session_options, const OrtLogger* logger,
                                                 OrtEp** ep) noexcept {
  auto* factory = static_cast<SimFactory*>(self);
  *ep = nullptr;
  return guarded(factory->apis, [&] {
    const Apis& apis = factory->apis;
    if (num_devices != 1)
      fail(apis, ORT_INVALID_ARGUMENT,
           "RungSimAccelerator: expected exactly one device, got " + std::to_string(num_devices));
    // Session-level EP options arrive as session config entries "ep.<lower-case ep name>.<key>".
    std::string prefix = "ep.";
    for (const char* c = kEpName; *c; ++c) prefix += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    prefix += ".";
    KnobSource from_options = [&](std::string_view key) {
      return session_config(apis, session_options, prefix + std::string(key));
    };
    Knobs knobs;
    if (auto err = parse_knobs(from_options, knobs)) fail(apis, ORT_INVALID_ARGUMENT, "RungSimAccelerator: " + *err);
    if (simulate_stage(knobs, Stage::CreateEp)) fail(apis, ORT_EP_FAIL, stage_failure_message(Stage::CreateEp));
    const bool ep_context = session_config(apis, session_options, "ep.context_enable").value_or("0") == "1";
    *ep = new SimEp(apis, std::move(knobs), ep_context, logger);
  });
}

void ORT_API_CALL SimFactory::ReleaseEpImpl(OrtEpFactory*, OrtEp* ep) noexcept { delete static_cast<SimEp*>(ep); }

// The OrtApi version to ask for: ours, or the runtime's if it is older (parsed from "1.<minor>.<patch>").
uint32_t wanted_api_version(const OrtApiBase* base) {
  uint32_t wanted = ORT_API_VERSION;
  const char* v = base->GetVersionString ? base->GetVersionString() : nullptr;
  unsigned major = 0, minor = 0;
  if (v && std::sscanf(v, "%u.%u", &major, &minor) == 2 && major == 1 && minor < wanted) wanted = minor;
  return wanted;
}

}  // namespace
}  // namespace rung::sim_ep

using namespace rung::sim_ep;

RUNG_SIM_EP_EXPORT OrtStatus* CreateEpFactories(const char* registration_name, const OrtApiBase* ort_api_base,
                                                const OrtLogger* /*default_logger*/, OrtEpFactory** factories,
                                                size_t max_factories, size_t* num_factories) {
  *num_factories = 0;
  // Plugin EP support (Graph/Node/EpGraphSupportInfo APIs) is complete from API 23 on.
  constexpr uint32_t kMinApiVersion = 23;
  Apis apis;
  for (uint32_t v = wanted_api_version(ort_api_base); v >= kMinApiVersion && apis.ort == nullptr; --v) {
    apis.ort = ort_api_base->GetApi(v);
    apis.version = v;
  }
  if (apis.ort == nullptr) {
    const OrtApi* v1 = ort_api_base->GetApi(1);  // CreateStatus has been in every version
    return v1 ? v1->CreateStatus(ORT_NOT_IMPLEMENTED, "RungSimAccelerator needs ONNX Runtime API version 23 or later")
              : nullptr;
  }
  return guarded(apis, [&] {
    Knobs knobs;  // only the environment exists at this point
    if (auto err = parse_knobs(nullptr, knobs)) fail(apis, ORT_INVALID_ARGUMENT, "RungSimAccelerator: " + *err);
    if (simulate_stage(knobs, Stage::Factory)) fail(apis, ORT_EP_FAIL, stage_failure_message(Stage::Factory));
    if (max_factories < 1) fail(apis, ORT_INVALID_ARGUMENT, "RungSimAccelerator: no room for a factory");
    apis.ep = apis.ort->GetEpApi();
    apis.editor = apis.ort->GetModelEditorApi();
    if (apis.ep == nullptr) fail(apis, ORT_NOT_IMPLEMENTED, "RungSimAccelerator: runtime has no EP API");
    factories[0] = new SimFactory(apis, registration_name ? registration_name : "");
    *num_factories = 1;
  });
}

RUNG_SIM_EP_EXPORT OrtStatus* ReleaseEpFactory(OrtEpFactory* factory) {
  delete static_cast<SimFactory*>(factory);
  return nullptr;
}
