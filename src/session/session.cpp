#include "session/session.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/ort_api.h"

namespace rung {
namespace {

// EP device and plugin library entries arrived in API 22.
constexpr int kPluginApiVersion = 22;

ElementType from_ort(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return ElementType::kFloat;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return ElementType::kFloat16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return ElementType::kDouble;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return ElementType::kInt8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return ElementType::kUint8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return ElementType::kInt16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return ElementType::kInt32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return ElementType::kInt64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return ElementType::kBool;
    default: return ElementType::kUnsupported;
  }
}

ONNXTensorElementDataType to_ort(ElementType t) {
  switch (t) {
    case ElementType::kFloat: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case ElementType::kFloat16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case ElementType::kDouble: return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case ElementType::kInt8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case ElementType::kUint8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case ElementType::kInt16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case ElementType::kInt32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case ElementType::kInt64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case ElementType::kBool: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    case ElementType::kUnsupported: break;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

TensorInfo info_of(const std::string& name, const Ort::TypeInfo& type) {
  TensorInfo info;
  info.name = name;
  if (type.GetONNXType() != ONNX_TYPE_TENSOR) {
    info.type = ElementType::kUnsupported;
    return info;
  }
  auto t = type.GetTensorTypeAndShapeInfo();
  info.type = from_ort(t.GetElementType());
  info.shape = t.GetShape();
  std::vector<const char*> sym(info.shape.size(), nullptr);
  if (!sym.empty()) t.GetSymbolicDimensions(sym.data(), sym.size());
  for (const char* s : sym) info.symbolic_dims.emplace_back(s != nullptr ? s : "");
  return info;
}

std::unordered_map<std::string, std::string> unordered(const std::map<std::string, std::string>& m) {
  return {m.begin(), m.end()};
}

std::mutex process_mutex;
OrtProcess* process = nullptr;  // never destroyed: sessions may outlive any owner

}  // namespace

Status append_provider(Ort::SessionOptions& options, OrtProcess& ort, const RungSpec& rung,
                       const ProviderSettings& settings) {
  auto o = provider_option_map(rung, settings);
  try {
    switch (rung.append) {
      case AppendMethod::kNone:
        return {};
      case AppendMethod::kTensorRtV2: {
        Ort::TensorRTProviderOptions trt;
        trt.Update(unordered(o));
        options.AppendExecutionProvider_TensorRT_V2(*trt);
        return {};
      }
      case AppendMethod::kCudaV2: {
        Ort::CUDAProviderOptions cuda;
        cuda.Update(unordered(o));
        options.AppendExecutionProvider_CUDA_V2(*cuda);
        return {};
      }
      case AppendMethod::kOpenVinoV2:
        options.AppendExecutionProvider_OpenVINO_V2(unordered(o));
        return {};
      case AppendMethod::kKeyValue:
        options.AppendExecutionProvider(rung.provider, unordered(o));
        return {};
      case AppendMethod::kPluginDevice:
        return ort.append_plugin(options, rung, o);
    }
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
  return Error{ErrorCode::kUnsupported, fmt::format("{}: unknown append method", rung.name)};
}

OrtProcess::OrtProcess(RuntimeBuild build) : build_(std::move(build)), env_(ORT_LOGGING_LEVEL_ERROR, "rung") {}

Result<OrtProcess*> OrtProcess::install(const RuntimeBuild& build) {
  std::lock_guard lock(process_mutex);
  if (process != nullptr) {
    if (process->build_.library == build.library) return process;
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("this process already runs ONNX Runtime {} ({}); cannot switch to {}", process->build_.version,
                             process->build_.library.string(), build.library.string())};
  }
  if (auto s = ort::install_api(build.api, build.api_version); !s) return s.error();
  try {
    process = new OrtProcess(build);
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, fmt::format("ONNX Runtime {}: creating the environment failed: {}", build.version, e.what())};
  }
  return process;
}

OrtProcess* OrtProcess::current() {
  std::lock_guard lock(process_mutex);
  return process;
}

Result<std::vector<std::string>> OrtProcess::register_plugin_locked(const std::filesystem::path& library) {
  // Registered once per name: ONNX Runtime refuses a second library under a name it holds, and
  // a copy of the same plugin from another directory brings the same EPs.
  if (auto it = plugins_.find(library.stem().string()); it != plugins_.end()) return it->second;
  if (build_.api_version < kPluginApiVersion) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX Runtime {} serves API {}; plugin execution providers need {}",
                                                      build_.version, build_.api_version, kPluginApiVersion)};
  }
  try {
    std::vector<std::string> before;
    for (const auto& d : env_.GetEpDevices()) before.emplace_back(d.EpName());
    env_.RegisterExecutionProviderLibrary(library.stem().c_str(), library.string());
    std::vector<std::string> added;
    for (const auto& d : env_.GetEpDevices()) {
      std::string name = d.EpName();
      if (std::find(before.begin(), before.end(), name) == before.end() &&
          std::find(added.begin(), added.end(), name) == added.end()) {
        added.push_back(name);
      }
    }
    if (added.empty()) {
      return Error{ErrorCode::kUnsupported, fmt::format("{}: registered, but it offers no device here", library.string())};
    }
    plugins_[library.stem().string()] = added;
    return added;
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, fmt::format("{}: registering the plugin failed: {}", library.string(), e.what())};
  }
}

Result<std::vector<std::string>> OrtProcess::plugin_ep_names(const std::filesystem::path& library) {
  std::lock_guard lock(mutex_);
  return register_plugin_locked(library);
}

Status OrtProcess::append_plugin(Ort::SessionOptions& options, const RungSpec& rung,
                                 const std::map<std::string, std::string>& o) {
  std::lock_guard lock(mutex_);
  auto names = register_plugin_locked(rung.plugin_library);
  if (!names) return names.error();
  try {
    std::vector<Ort::ConstEpDevice> devices;
    for (const auto& d : env_.GetEpDevices()) {
      if (std::find(names->begin(), names->end(), std::string(d.EpName())) != names->end()) devices.push_back(d);
    }
    options.AppendExecutionProvider_V2(env_, devices, std::unordered_map<std::string, std::string>(o.begin(), o.end()));
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
  return {};
}

Result<Ort::Session> open_session(OrtProcess& process, const std::filesystem::path& model, const SessionSettings& settings) {
  try {
    Ort::SessionOptions options;
    if (settings.intra_op_threads > 0) options.SetIntraOpNumThreads(settings.intra_op_threads);
    if (!settings.optimized_model_path.empty()) options.SetOptimizedModelFilePath(settings.optimized_model_path.c_str());
    if (!settings.profile_prefix.empty()) options.EnableProfiling(settings.profile_prefix.c_str());
    if (auto s = append_provider(options, process, settings.rung, settings.provider); !s) {
      return s.error();
    }
    return Ort::Session(process.env(), model.c_str(), options);
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

ModelIo describe_session(const Ort::Session& session) {
  ModelIo io;
  Ort::AllocatorWithDefaultOptions alloc;
  for (std::size_t i = 0; i < session.GetInputCount(); ++i) {
    io.inputs.push_back(info_of(session.GetInputNameAllocated(i, alloc).get(), session.GetInputTypeInfo(i)));
  }
  for (std::size_t i = 0; i < session.GetOutputCount(); ++i) {
    io.outputs.push_back(info_of(session.GetOutputNameAllocated(i, alloc).get(), session.GetOutputTypeInfo(i)));
  }
  return io;
}

namespace {

Result<std::vector<Tensor>> run_described(Ort::Session& session, const ModelIo& io, const std::vector<Tensor>& inputs,
                                          const std::map<std::string, std::string>& run_config) {
  try {
    static const Ort::MemoryInfo mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    std::vector<Ort::Value> values;
    std::vector<const char*> in_names;
    values.reserve(inputs.size());
    in_names.reserve(inputs.size());
    for (const auto& t : inputs) {
      values.push_back(Ort::Value::CreateTensor(mem, const_cast<std::byte*>(t.bytes.data()), t.bytes.size(), t.shape.data(),
                                                t.shape.size(), to_ort(t.type)));
      in_names.push_back(t.name.c_str());
    }
    std::vector<const char*> out_names;
    out_names.reserve(io.outputs.size());
    for (const auto& o : io.outputs) out_names.push_back(o.name.c_str());
    // Run options only when asked for: the common run builds none.
    Ort::RunOptions run_options{nullptr};
    if (!run_config.empty()) {
      run_options = Ort::RunOptions();
      for (const auto& [k, v] : run_config) run_options.AddConfigEntry(k.c_str(), v.c_str());
    }
    auto results = session.Run(run_options, in_names.data(), values.data(), values.size(), out_names.data(),
                               out_names.size());
    std::vector<Tensor> out;
    out.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      Tensor t;
      t.name = io.outputs[i].name;
      if (!results[i].IsTensor()) return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is not a tensor", t.name)};
      auto info = results[i].GetTensorTypeAndShapeInfo();
      t.type = from_ort(info.GetElementType());
      t.shape = info.GetShape();
      const auto* data = static_cast<const std::byte*>(results[i].GetTensorRawData());
      auto bytes = tensor_bytes(fmt::format("output '{}'", t.name), t.type, t.shape, UINT64_MAX);
      if (!bytes) return bytes.error();
      t.bytes.assign(data, data + *bytes);
      out.push_back(std::move(t));
    }
    return out;
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

}  // namespace

ONNXTensorElementDataType ort_element_type(ElementType type) { return to_ort(type); }

Result<std::vector<Tensor>> run_session(Ort::Session& session, const std::vector<Tensor>& inputs) {
  try {
    auto io = describe_session(session);
    return run_described(session, io, inputs, {});
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

Result<PreparedSession> prepare_session(Ort::Session session) {
  try {
    ModelIo io = describe_session(session);
    return PreparedSession{std::move(session), std::move(io)};
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

Result<std::vector<Tensor>> run_session(PreparedSession& prepared, const std::vector<Tensor>& inputs,
                                        const std::map<std::string, std::string>& run_config) {
  return run_described(prepared.session, prepared.io, inputs, run_config);
}

}  // namespace rung
