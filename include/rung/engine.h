// The engine for C++ applications: a header-only layer over the C ABI
// (rung/rung.h), one RAII class per handle and rung::Result (rung/status.h) for
// every call that can fail, so C and C++ callers run one implementation. It
// needs nothing but librung_engine (rung::engine) and includes nothing but the
// other stable headers; it is stable as the C ABI is. value() on a failed
// Result or Status throws the rung::Error it holds (what(), exit_code()).
//
//   #include "rung/engine.h"
//   int main() {
//     auto options = rung::Options::create().value();
//     options.set("cache_dir", "/var/cache/myapp/rung").value();
//     options.add_model("ppocr_cls", "cls.onnx", "generic").value();
//     auto engine = rung::Engine::start(options).value();  // never blocks
//     auto job = engine.open_job().value();
//     auto session = job.session("ppocr_cls").value();
//     std::vector<float> pixels(3 * 48 * 192);
//     auto x = rung::TensorData::view<float>("x", RUNG_FLOAT32, {1, 3, 48, 192}, pixels).value();
//     std::vector<rung::TensorData> inputs;
//     inputs.push_back(std::move(x));
//     auto outputs = session.run(inputs).value();
//     return outputs.empty() ? 1 : 0;
//   }
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rung/rung.h"
#include "rung/status.h"

namespace rung {
namespace abi_detail {

template <class T, void (*Free)(T*)>
struct Free_ {
  void operator()(T* p) const { Free(p); }
};
template <class T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Free_<T, Free>>;

inline ErrorCode error_code(rung_error_code code) {
  switch (code) {
    case RUNG_INVALID_ARGUMENT: return ErrorCode::kInvalidArgument;
    case RUNG_NOT_FOUND: return ErrorCode::kNotFound;
    case RUNG_PERMISSION: return ErrorCode::kPermission;
    case RUNG_LOAD_FAILED: return ErrorCode::kLoadFailed;
    case RUNG_UNSUPPORTED: return ErrorCode::kUnsupported;
    case RUNG_IO: return ErrorCode::kIo;
    case RUNG_NO_RUNTIME: return ErrorCode::kNoRuntime;
    case RUNG_OK:
    case RUNG_RUNTIME:
    case RUNG_ERROR_CODE_MAX_: break;
  }
  return ErrorCode::kRuntime;
}

// Ok for NULL; else the status as an Error, freed.
inline Status take(rung_status* status) {
  if (status == nullptr) return {};
  Owned<rung_status, rung_status_free> held(status);
  return Error{error_code(rung_status_code(status)), rung_status_message(status)};
}

inline std::string take(char* text) {
  Owned<char, rung_string_free> held(text);
  return text == nullptr ? std::string() : std::string(text);
}

}  // namespace abi_detail

// What the progress callback is told (rung_progress).
struct Progress {
  std::size_t total = 0;
  std::size_t landed = 0;
  std::string building;
  std::string line;
  bool done = false;
};

class Engine;

// The engine's options, by the keys rung/rung.h lists.
class Options {
 public:
  static Result<Options> create() {
    rung_options* made = nullptr;
    if (auto st = abi_detail::take(rung_options_create(&made)); !st) return st.error();
    return Options(made);
  }
  Status set(const std::string& key, const std::string& value) {
    return abi_detail::take(rung_options_set(handle_.get(), key.c_str(), value.c_str()));
  }
  Status add_model(const std::string& name, const std::string& path, const std::string& role = "generic") {
    return abi_detail::take(rung_options_add_model(handle_.get(), name.c_str(), path.c_str(), role.c_str()));
  }
  // Called on the engine's background thread; kept alive by every engine started from these options.
  Status on_progress(std::function<void(const Progress&)> callback) {
    progress_ = std::make_shared<std::function<void(const Progress&)>>(std::move(callback));
    return abi_detail::take(rung_options_set_progress(handle_.get(), &Options::relay, progress_.get()));
  }

 private:
  friend class Engine;
  explicit Options(rung_options* made) : handle_(made) {}
  static void relay(void* user, const rung_progress* p) {
    const auto& callback = *static_cast<const std::function<void(const Progress&)>*>(user);
    try {
      callback(Progress{p->total, p->landed, p->building, p->line, p->done != 0});
    } catch (...) {
      // An exception must not cross into the engine's thread; the callback's own fault is dropped.
    }
  }
  abi_detail::Owned<rung_options, rung_options_free> handle_;
  std::shared_ptr<std::function<void(const Progress&)>> progress_;
};

// A tensor crossing the ABI: a view of the caller's elements (an input: no copy,
// the elements must outlive the run) or elements rung owns (an output).
class TensorData {
 public:
  static Result<TensorData> view(const std::string& name, rung_element_type type, const std::vector<std::int64_t>& shape,
                                 std::span<const std::byte> bytes) {
    rung_value* made = nullptr;
    if (auto st = abi_detail::take(rung_value_create_view(name.c_str(), type, shape.data(), shape.size(), bytes.data(), bytes.size(), &made));
        !st) {
      return st.error();
    }
    return TensorData(made);
  }
  template <class T>
  static Result<TensorData> view(const std::string& name, rung_element_type type, const std::vector<std::int64_t>& shape,
                                 std::span<const T> elements) {
    return view(name, type, shape, std::as_bytes(elements));
  }
  static Result<TensorData> strings(const std::string& name, const std::vector<std::int64_t>& shape, const std::vector<std::string>& items) {
    std::vector<const char*> pointers;
    for (const auto& s : items) pointers.push_back(s.c_str());
    rung_value* made = nullptr;
    if (auto st = abi_detail::take(rung_value_create_strings(name.c_str(), shape.data(), shape.size(), pointers.data(), pointers.size(), &made));
        !st) {
      return st.error();
    }
    return TensorData(made);
  }

  std::string name() const { return rung_value_name(handle_.get()); }
  rung_element_type type() const { return rung_value_element_type(handle_.get()); }
  std::vector<std::int64_t> shape() const {
    std::size_t rank = 0;
    const std::int64_t* dims = rung_value_shape(handle_.get(), &rank);
    return {dims, dims + rank};
  }
  std::span<const std::byte> bytes() const {
    std::size_t size = 0;
    const void* data = rung_value_data(handle_.get(), &size);
    return {static_cast<const std::byte*>(data), size};
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < rung_value_string_count(handle_.get()); ++i) out.emplace_back(rung_value_string(handle_.get(), i));
    return out;
  }
  const rung_value* handle() const { return handle_.get(); }

 private:
  friend class Session;
  explicit TensorData(rung_value* made) : handle_(made) {}
  abi_detail::Owned<rung_value, rung_value_free> handle_;
};

// One input or output as the model declares it (-1: a dynamic dimension).
struct IoInfo {
  std::string name;
  rung_element_type type = RUNG_FLOAT32;
  std::vector<std::int64_t> shape;
  std::vector<std::string> dim_names;
};

// A model's session inside a job: the job's, valid while the job lives. Thread-safe to run.
class Session {
 public:
  std::string model_name() const { return rung_session_model_name(handle_); }
  std::string model_id() const { return rung_session_model_id(handle_); }
  std::string rung() const { return rung_session_rung(handle_); }
  std::string placement_reason() const { return rung_session_placement_reason(handle_); }
  std::vector<IoInfo> inputs() const { return describe(RUNG_INPUTS); }
  std::vector<IoInfo> outputs() const { return describe(RUNG_OUTPUTS); }
  rung_session* handle() const { return handle_; }  // for a call the layer does not wrap
  // ONNX Runtime's own handles (rung.h): for Ort::InitApi(static_cast<const OrtApi*>(ort_api()))
  // and an Ort::Session around ort_session() that release()s it before it goes.
  const void* ort_api() const { return rung_session_ort_api(handle_); }
  std::uint32_t ort_api_version() const { return rung_session_ort_api_version(handle_); }
  void* ort_session() const { return rung_session_ort_session(handle_); }

  Result<std::vector<TensorData>> run(const std::vector<TensorData>& inputs) const {
    std::vector<const rung_value*> in;
    for (const auto& t : inputs) in.push_back(t.handle());
    rung_value** out = nullptr;
    std::size_t n = 0;
    if (auto st = abi_detail::take(rung_session_run(handle_, in.data(), in.size(), &out, &n)); !st) return st.error();
    std::vector<TensorData> outputs;
    for (std::size_t i = 0; i < n; ++i) outputs.push_back(TensorData(out[i]));
    rung_values_free(out, 0);  // the values are the TensorData's now: only the array goes
    return outputs;
  }

 private:
  friend class Job;
  explicit Session(rung_session* handle) : handle_(handle) {}
  std::vector<IoInfo> describe(int32_t which) const {
    std::vector<IoInfo> out;
    for (std::size_t i = 0; i < rung_session_describe(handle_, which); ++i) {
      rung_io_info info{};
      info.struct_size = sizeof info;
      if (!abi_detail::take(rung_session_io(handle_, which, i, &info))) continue;
      IoInfo io{info.name, info.element_type, {info.shape, info.shape + info.rank}, {}};
      for (std::size_t d = 0; d < info.rank; ++d) io.dim_names.emplace_back(info.dim_names[d]);
      out.push_back(std::move(io));
    }
    return out;
  }
  rung_session* handle_;
};

// A unit of work pinned to the rung and forms that had landed when it opened.
class Job {
 public:
  Result<Session> session(const std::string& model_name) {
    rung_session* s = nullptr;
    if (auto st = abi_detail::take(rung_job_session(handle_.get(), model_name.c_str(), &s)); !st) return st.error();
    return Session(s);
  }
  std::string rung() const { return rung_job_rung(handle_.get()); }
  // {"model name": "model id", ...} of every session opened so far.
  std::string model_ids_json() const { return abi_detail::take(rung_job_model_ids_json(handle_.get())); }

 private:
  friend class Engine;
  explicit Job(rung_job* made) : handle_(made) {}
  abi_detail::Owned<rung_job, rung_job_free> handle_;
};

// The engine: one per process, started at launch; it never blocks.
class Engine {
 public:
  static Result<Engine> start(const Options& options) {
    rung_engine* made = nullptr;
    if (auto st = abi_detail::take(rung_engine_start(options.handle_.get(), &made)); !st) return st.error();
    return Engine(made, options.progress_);
  }
  std::string about_line() const { return abi_detail::take(rung_engine_about_line(handle_.get())); }
  std::string chosen_rung() const { return abi_detail::take(rung_engine_chosen_rung(handle_.get())); }
  std::string chosen_reason() const { return abi_detail::take(rung_engine_chosen_reason(handle_.get())); }
  std::string progress_line() const { return abi_detail::take(rung_engine_progress_line(handle_.get())); }
  // The whole decision as one JSON document (rung_engine_decision_json; ABI 3).
  std::string decision_json() const { return abi_detail::take(rung_engine_decision_json(handle_.get())); }
  bool probe_done() const { return rung_engine_probe_done(handle_.get()) != 0; }
  rung_engine* handle() const { return handle_.get(); }  // for a call the layer does not wrap
  // Whether the probe reported and every engine landed or failed within `timeout` (forever without one).
  bool wait_until_settled(std::optional<std::chrono::milliseconds> timeout = std::nullopt) const {
    return rung_engine_wait_until_settled(handle_.get(), timeout ? timeout->count() : -1) != 0;
  }
  Result<Job> open_job() {
    rung_job* j = nullptr;
    if (auto st = abi_detail::take(rung_engine_open_job(handle_.get(), &j)); !st) return st.error();
    return Job(j);
  }

 private:
  Engine(rung_engine* made, std::shared_ptr<std::function<void(const Progress&)>> progress)
      : progress_(std::move(progress)), handle_(made) {}
  // Declared first so it is destroyed last: the engine's thread may call it until the handle is freed.
  std::shared_ptr<std::function<void(const Progress&)>> progress_;
  abi_detail::Owned<rung_engine, rung_engine_free> handle_;
};

}  // namespace rung
