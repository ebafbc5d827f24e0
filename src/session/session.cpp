#include "session/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/onnx_types.h"
#include "runtime/ort_api.h"
#include "rungs/module.h"
#include "rung/path_text.h"

namespace rung {
namespace {

// EP device and plugin library entries arrived in API 22.
constexpr int kPluginApiVersion = 22;

ElementType from_ort(ONNXTensorElementDataType t) { return element_type_from_onnx(static_cast<int>(t)); }

ONNXTensorElementDataType to_ort(ElementType t) { return static_cast<ONNXTensorElementDataType>(onnx_data_type(t)); }

// Describes a type, unwrapping sequences and optionals down to their tensor.
void describe_type(const Ort::ConstTypeInfo& type, TensorInfo& info) {
  switch (type.GetONNXType()) {
    case ONNX_TYPE_TENSOR: {
      auto t = type.GetTensorTypeAndShapeInfo();
      const auto element = t.GetElementType();
      info.type = from_ort(element);
      if (info.type == ElementType::kUnsupported) info.other = fmt::format("tensor of {}", onnx_data_type_name(static_cast<int>(element)));
      info.shape = t.GetShape();
      std::vector<const char*> sym(info.shape.size(), nullptr);
      if (!sym.empty()) t.GetSymbolicDimensions(sym.data(), sym.size());
      for (const char* s : sym) info.symbolic_dims.emplace_back(s != nullptr ? s : "");
      return;
    }
    case ONNX_TYPE_SEQUENCE: {
      info.wrappers.push_back(Value::Kind::kSequence);
      auto element = type.GetSequenceTypeInfo().GetSequenceElementType();
      describe_type(element.GetConst(), info);
      return;
    }
    case ONNX_TYPE_OPTIONAL: {
      info.wrappers.push_back(Value::Kind::kOptional);
      auto contained = type.GetOptionalTypeInfo().GetOptionalElementType();
      describe_type(contained.GetConst(), info);
      return;
    }
    case ONNX_TYPE_MAP: info.other = "map"; break;
    case ONNX_TYPE_SPARSETENSOR: info.other = "sparse tensor"; break;
    default: info.other = "opaque value"; break;
  }
  info.type = ElementType::kUnsupported;
}

TensorInfo info_of(const std::string& name, const Ort::TypeInfo& type) {
  TensorInfo info;
  info.name = name;
  describe_type(type.GetConst(), info);
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
    // What the provider asks of the session it joins (its module's quirks).
    if (const RungModule* m = module_of(rung); m != nullptr) {
      if (!m->quirks.memory_pattern) options.DisableMemPattern();
      if (!m->quirks.parallel_execution) options.SetExecutionMode(ORT_SEQUENTIAL);
    }
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
  RUNG_RETURN_IF_ERROR(ort::install_api(build.api, build.api_version));
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
    env_.RegisterExecutionProviderLibrary(library.stem().string().c_str(), library.native());
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
  auto names = register_plugin_locked(path_from_utf8(rung.plugin_library));
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
    ProviderSettings provider = settings.provider;
    provider.threads = settings.intra_op_threads;
    const RungModule* module = module_of(settings.rung);
    if (module != nullptr && module->quirks.owns_thread_pool) {
      options.SetIntraOpNumThreads(1);  // the provider's own pool has the threads
    } else if (settings.intra_op_threads > 0) {
      options.SetIntraOpNumThreads(settings.intra_op_threads);
    }
    if (!settings.optimized_model_path.empty()) options.SetOptimizedModelFilePath(settings.optimized_model_path.c_str());
    if (!settings.profile_prefix.empty()) options.EnableProfiling(settings.profile_prefix.c_str());
    if (auto s = append_provider(options, process, settings.rung, provider); !s) {
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

const Ort::MemoryInfo& cpu_memory() {
  static const Ort::MemoryInfo mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  return mem;
}

Result<std::optional<Ort::Value>> tensor_feed(const Tensor& t, const std::string& name) {
  if (t.type == ElementType::kUnsupported) {
    return Error{ErrorCode::kUnsupported, fmt::format("input '{}' has an element type rung cannot feed", name)};
  }
  return std::optional<Ort::Value>(tensor_value(t));
}

// The value to feed; nullopt for an optional that is None (left out of the feeds).
Result<std::optional<Ort::Value>> input_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kTensor:
      return tensor_feed(v.tensor, v.name);
    case Value::Kind::kSequence: {
      std::vector<Ort::Value> items;
      for (const auto& item : v.items) {
        if (item.kind != Value::Kind::kTensor) {
          return Error{ErrorCode::kUnsupported, fmt::format("input '{}': a sequence of {} values; ONNX Runtime takes sequences of tensors",
                                                            v.name, item.kind == Value::Kind::kSequence ? "sequence" : "optional")};
        }
        items.push_back(tensor_value(item.tensor));
      }
      return std::optional<Ort::Value>(Ort::Value::CreateSequence(items));
    }
    case Value::Kind::kOptional:
      if (v.items.empty()) return std::optional<Ort::Value>();
      return input_value(v.items.front());
  }
  return Error{ErrorCode::kUnsupported, fmt::format("input '{}': unknown kind of value", v.name)};
}

Tensor tensor_of(const Ort::ConstValue& value, const std::string& name) {
  Tensor t;
  t.name = name;
  auto info = value.GetTensorTypeAndShapeInfo();
  t.type = from_ort(info.GetElementType());
  t.shape = info.GetShape();
  // ONNX Runtime's own shape: its count cannot fail, and a failure would hold nothing.
  const auto count = t.element_count();
  const std::size_t n = count ? static_cast<std::size_t>(*count) : 0;
  if (t.type == ElementType::kString) {
    t.strings.reserve(n);
    for (std::size_t i = 0; i < n; ++i) t.strings.push_back(value.GetStringTensorElement(i));
  } else if (t.type != ElementType::kUnsupported) {
    const auto* data = static_cast<const std::byte*>(value.GetTensorRawData());
    t.bytes.assign(data, data + n * element_size(t.type));
  }
  return t;
}

// An output as the model declares it: `depth` counts the wrappers already unwrapped.
Result<Value> output_value(const Ort::ConstValue& value, const TensorInfo& info, std::size_t depth, const std::string& name) {
  if (depth < info.wrappers.size() && info.wrappers[depth] == Value::Kind::kOptional) {
    if (!value.HasValue()) return Value::optional(name, std::nullopt);
    auto held = output_value(value, info, depth + 1, name);
    if (!held) return held.error();
    return Value::optional(name, std::move(*held));
  }
  if (!value.HasValue()) return Error{ErrorCode::kRuntime, fmt::format("output '{}' is None, but the model does not declare it optional", name)};
  const ONNXType type = value.GetTypeInfo().GetONNXType();
  if (type == ONNX_TYPE_TENSOR) {
    Tensor t = tensor_of(value, name);
    if (t.type == ElementType::kUnsupported) {
      return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is a tensor of {}, which rung does not hold", name,
                                                        onnx_data_type_name(static_cast<int>(value.GetTensorTypeAndShapeInfo().GetElementType())))};
    }
    return Value::of(std::move(t));
  }
  if (type == ONNX_TYPE_SEQUENCE) {
    Ort::AllocatorWithDefaultOptions alloc;
    std::vector<Value> items;
    const std::size_t n = value.GetCount();
    for (std::size_t i = 0; i < n; ++i) {
      Ort::Value item = value.GetValue(static_cast<int>(i), alloc);
      auto v = output_value(item.GetConst(), info, depth + 1, fmt::format("{}[{}]", name, i));
      if (!v) return v.error();
      items.push_back(std::move(*v));
    }
    return Value::sequence(name, std::move(items));
  }
  return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is {}, which rung does not hold", name, info.describe())};
}

// What a run is given: a value per input fed, and the names they go to.
struct Feeds {
  std::vector<Ort::Value> values;
  std::vector<const char*> names;
};

// Each input's value as `make` builds it (nullopt: left out of the feeds).
template <class Input, class Make>
Result<Feeds> collect_feeds(const std::vector<Input>& inputs, Make make) {
  Feeds f;
  f.values.reserve(inputs.size());
  f.names.reserve(inputs.size());
  for (const auto& in : inputs) {
    Result<std::optional<Ort::Value>> v = make(in);
    if (!v) return v.error();
    if (!*v) continue;
    f.values.push_back(std::move(**v));
    f.names.push_back(in.name.c_str());
  }
  return f;
}

// Runs the feeds and asks for every output, in the model's order. Throws Ort::Exception.
// `profile_prefix`, when given, has ONNX Runtime profile this run alone (callers check runs_profile_alone()).
std::vector<Ort::Value> run_feeds(Ort::Session& session, const ModelIo& io, const Feeds& feeds,
                                  const std::map<std::string, std::string>& run_config,
                                  const std::filesystem::path* profile_prefix = nullptr) {
  std::vector<const char*> out_names;
  out_names.reserve(io.outputs.size());
  for (const auto& o : io.outputs) out_names.push_back(o.name.c_str());
  // Run options only when asked for: the common run builds none.
  Ort::RunOptions run_options{nullptr};
  if (!run_config.empty() || profile_prefix != nullptr) {
    run_options = Ort::RunOptions();
    for (const auto& [k, v] : run_config) run_options.AddConfigEntry(k.c_str(), v.c_str());
    if (profile_prefix != nullptr) run_options.EnableProfiling(profile_prefix->c_str());
  }
  return session.Run(run_options, feeds.names.data(), feeds.values.data(), feeds.values.size(), out_names.data(), out_names.size());
}

Result<std::vector<Value>> run_values(Ort::Session& session, const ModelIo& io, const std::vector<Value>& inputs,
                                      const std::map<std::string, std::string>& run_config) {
  try {
    auto feeds = collect_feeds(inputs, input_value);  // an optional None is left out
    if (!feeds) return feeds.error();
    auto results = run_feeds(session, io, *feeds, run_config);
    std::vector<Value> out;
    out.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      auto v = output_value(results[i].GetConst(), io.outputs[i], 0, io.outputs[i].name);
      if (!v) return v.error();
      out.push_back(std::move(*v));
    }
    return out;
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

// A lent input, fed in place: ONNX Runtime reads the owner's memory (strings are
// copied into a tensor of its own, as ONNX Runtime holds them).
Ort::Value lent_value(const InputView& v) {
  if (v.type == ElementType::kString) {
    Ort::AllocatorWithDefaultOptions alloc;
    auto value = Ort::Value::CreateTensor(alloc, v.shape.data(), v.shape.size(), ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING);
    if (v.strings == nullptr) return value;
    // By length, not as C strings: an ONNX string may hold a NUL.
    for (std::size_t i = 0; i < v.strings->size(); ++i) {
      const std::string& text = (*v.strings)[i];
      char* buffer = value.GetResizedStringTensorElementBuffer(i, text.size());
      std::memcpy(buffer, text.data(), text.size());
    }
    return value;
  }
  static std::byte empty[1];  // ONNX Runtime wants a pointer even for no elements
  void* data = v.size == 0 || v.data == nullptr ? empty : const_cast<void*>(v.data);
  return Ort::Value::CreateTensor(cpu_memory(), data, v.size, v.shape.data(), v.shape.size(), to_ort(v.type));
}

Result<std::optional<Ort::Value>> view_feed(const InputView& v) {
  if (v.type == ElementType::kUnsupported) {
    return Error{ErrorCode::kUnsupported, fmt::format("input '{}' has an element type rung cannot feed", v.name)};
  }
  return std::optional<Ort::Value>(lent_value(v));
}

// The tensor-only path: what the probe, bench and engine run, no Value copies on the way.
template <class Input, class Make>
Result<std::vector<Tensor>> run_described(Ort::Session& session, const ModelIo& io, const std::vector<Input>& inputs, Make make,
                                          const std::map<std::string, std::string>& run_config,
                                          const std::filesystem::path* profile_prefix = nullptr) {
  try {
    auto feeds = collect_feeds(inputs, make);
    if (!feeds) return feeds.error();
    auto results = run_feeds(session, io, *feeds, run_config, profile_prefix);
    std::vector<Tensor> out;
    out.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!results[i].IsTensor()) {
        return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is {}, not a tensor", io.outputs[i].name, io.outputs[i].describe())};
      }
      Tensor t = tensor_of(results[i].GetConst(), io.outputs[i].name);
      if (t.type == ElementType::kUnsupported) {
        return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is {}, which rung does not hold", t.name, io.outputs[i].describe())};
      }
      out.push_back(std::move(t));
    }
    return out;
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

Result<std::optional<Ort::Value>> own_tensor_feed(const Tensor& t) { return tensor_feed(t, t.name); }

}  // namespace

ONNXTensorElementDataType ort_element_type(ElementType type) { return to_ort(type); }

Ort::Value tensor_value(const Tensor& t) { return lent_value(InputView::of(t)); }


Result<std::vector<Tensor>> run_session(Ort::Session& session, const std::vector<Tensor>& inputs) {
  try {
    auto io = describe_session(session);
    return run_described(session, io, inputs, own_tensor_feed, {});
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
  return run_described(prepared.session, prepared.io, inputs, own_tensor_feed, run_config);
}

bool runs_profile_alone() { return ort::installed_api_version() >= ort::kRunProfilingApiVersion; }

Result<std::vector<Tensor>> run_session_profiled(PreparedSession& prepared, const std::vector<Tensor>& inputs,
                                                 const std::filesystem::path& prefix) {
  if (!runs_profile_alone()) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX Runtime's API {} profiles no single run (that needs API {})",
                                                      ort::installed_api_version(), ort::kRunProfilingApiVersion)};
  }
  return run_described(prepared.session, prepared.io, inputs, own_tensor_feed, {}, &prefix);
}

Result<std::vector<Tensor>> run_session_views(PreparedSession& prepared, const std::vector<InputView>& inputs,
                                              const std::map<std::string, std::string>& run_config) {
  return run_described(prepared.session, prepared.io, inputs, view_feed, run_config);
}

Result<std::vector<Value>> run_session_values(PreparedSession& prepared, const std::vector<Value>& inputs) {
  return run_values(prepared.session, prepared.io, inputs, {});
}

Status run_session_visiting(PreparedSession& prepared, const std::vector<Tensor>& inputs,
                            const std::function<Status(const std::vector<TensorView>&)>& visit) {
  try {
    auto feeds = collect_feeds(inputs, [](const Tensor& t) { return tensor_feed(t, t.name); });
    if (!feeds) return feeds.error();
    auto results = run_feeds(prepared.session, prepared.io, *feeds, {});
    std::vector<TensorView> views;
    views.reserve(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& declared = prepared.io.outputs[i];
      if (!results[i].IsTensor()) return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is {}, not a tensor", declared.name, declared.describe())};
      auto info = results[i].GetTensorTypeAndShapeInfo();
      TensorView v{declared.name, from_ort(info.GetElementType()), info.GetShape(), {}};
      if (v.type == ElementType::kUnsupported || v.type == ElementType::kString) {
        return Error{ErrorCode::kUnsupported, fmt::format("output '{}' is {}, which rung does not hold", declared.name, declared.describe())};
      }
      const auto* data = static_cast<const std::byte*>(results[i].GetTensorRawData());
      v.bytes = {data, info.GetElementCount() * element_size(v.type)};
      views.push_back(std::move(v));
    }
    return visit(views);
  } catch (const Ort::Exception& e) {
    return Error{ErrorCode::kRuntime, e.what()};
  }
}

}  // namespace rung
