// The C ABI (rung/rung.h) over the engine's core: handles that own C++ objects,
// statuses that carry an ErrorCode and its message, and no exception across
// the boundary (every entry point catches what the C++ side might throw).
#include "rung/rung.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capi/options.h"
#include "core/onnx_types.h"
#include "rung/json_text.h"
#include "rung/engine.h"  // abi_detail::error_code: one mapping of the C codes
#include "rung/engine_core.h"
#include "rung/printable.h"

struct rung_status {
  rung_error_code code;
  std::string message;
};

struct rung_options {
  rung::capi::OptionSet set;
};

struct rung_engine {
  std::shared_ptr<rung::core::Engine> engine;
};

struct rung_session {
  rung::core::Session* session = nullptr;  // the job's
  // What rung_session_io hands out, kept as long as the session.
  struct Io {
    std::vector<const char*> dim_names;
  };
  std::vector<Io> inputs, outputs;
};

struct rung_job {
  std::unique_ptr<rung::core::Job> job;
  std::mutex mutex;  // guards sessions: the job is callable from any thread
  std::map<rung::core::Session*, std::unique_ptr<rung_session>> sessions;
};

struct rung_value {
  std::string name;
  rung::ElementType type = rung::ElementType::kFloat;
  int32_t onnx_type = RUNG_FLOAT32;
  std::vector<int64_t> shape;
  // A view lends `data`; an output owns `owned` (and `data` points into it).
  const void* data = nullptr;
  std::size_t size = 0;
  std::vector<std::byte> owned;
  std::vector<std::string> strings;
};

namespace rung::capi {
namespace {

rung_error_code code_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return RUNG_INVALID_ARGUMENT;
    case ErrorCode::kNotFound: return RUNG_NOT_FOUND;
    case ErrorCode::kPermission: return RUNG_PERMISSION;
    case ErrorCode::kLoadFailed: return RUNG_LOAD_FAILED;
    case ErrorCode::kUnsupported: return RUNG_UNSUPPORTED;
    case ErrorCode::kRuntime: return RUNG_RUNTIME;
    case ErrorCode::kIo: return RUNG_IO;
    case ErrorCode::kNoRuntime: return RUNG_NO_RUNTIME;
  }
  return RUNG_RUNTIME;
}

}  // namespace

// Handed out when not even a status can be allocated; rung_status_free leaves it be.
rung_status kOutOfMemory{RUNG_RUNTIME, "out of memory"};

namespace {

rung_status* fail(rung_error_code code, std::string message) noexcept {
  try {
    return new rung_status{code, std::move(message)};
  } catch (...) {
    return &kOutOfMemory;
  }
}
rung_status* fail(const Error& e) noexcept { return fail(code_of(e.code), e.message); }
rung_status* invalid(std::string message) noexcept { return fail(RUNG_INVALID_ARGUMENT, std::move(message)); }

// Runs `body` (which returns a rung_status*), turning anything thrown into a status.
template <class Body>
rung_status* guarded(const char* function, Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(RUNG_RUNTIME, fmt::format("{}: out of memory", function));
  } catch (const LibraryUnavailable& e) {
    return fail(code_of(ErrorCode::kLoadFailed), fmt::format("{}: {}", function, e.what()));
  } catch (const Error& e) {  // a Result's value() taken on an error: its own code
    return fail(code_of(e.code), fmt::format("{}: {}", function, e.message));
  } catch (const std::exception& e) {
    return fail(RUNG_RUNTIME, fmt::format("{}: {}", function, e.what()));
  } catch (...) {
    return fail(RUNG_RUNTIME, fmt::format("{}: an unknown error", function));
  }
}

// Every text an application hands the ABI is UTF-8 (rung.h): else INVALID_ARGUMENT
// naming the function and the argument, before anything keeps or logs it.
rung_status* not_utf8(const char* function, const std::string& argument, const char* text) noexcept {
  if (text == nullptr) return nullptr;
  const std::string why = not_utf8_why(text);
  return why.empty() ? nullptr : invalid(fmt::format("{}: {} {}", function, argument, why));
}

// A caller-owned copy of `text` (rung_string_free), NULL when out of memory.
char* copy_out(const std::string& text) noexcept {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

template <class Body>
char* guarded_text(Body body) noexcept {
  try {
    return copy_out(body());
  } catch (...) {
    return nullptr;
  }
}

rung_session* session_of(rung_job& job, core::Session* s) {
  std::lock_guard lock(job.mutex);
  auto& held = job.sessions[s];
  if (!held) {
    auto made = std::make_unique<rung_session>();
    made->session = s;
    auto names = [](const std::vector<core::SessionIo>& ios, std::vector<rung_session::Io>& out) {
      for (const auto& io : ios) {
        rung_session::Io held_io;
        for (const auto& d : io.dim_names) held_io.dim_names.push_back(d.c_str());
        out.push_back(std::move(held_io));
      }
    };
    names(s->inputs(), made->inputs);
    names(s->outputs(), made->outputs);
    held = std::move(made);
  }
  return held.get();
}

// The element type a caller named by ONNX's number; an error names the input.
Result<ElementType> element_type_of(const char* name, int32_t type) {
  ElementType t = element_type_from_onnx(type);
  if (t == ElementType::kUnsupported) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("input '{}': element type {} ({}) is not one rung feeds", name, type, onnx_data_type_name(type))};
  }
  return t;
}

Result<std::vector<int64_t>> shape_of(const char* name, const int64_t* shape, size_t rank) {
  if (rank > 0 && shape == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("input '{}': a rank of {} with no shape", name, rank)};
  if (rank > 64) return Error{ErrorCode::kInvalidArgument, fmt::format("input '{}': rank {} is above 64", name, rank)};
  std::vector<int64_t> out(shape, shape + rank);
  if (auto n = element_count(out); !n) return Error{ErrorCode::kInvalidArgument, fmt::format("input '{}': {}", name, n.error().message)};
  return out;
}

}  // namespace
}  // namespace rung::capi

using namespace rung;         // NOLINT: this file is the C side of the boundary
using namespace rung::capi;   // NOLINT

extern "C" {

int32_t rung_abi_version(void) { return RUNG_ABI_VERSION; }
const char* rung_version_string(void) { return RUNG_VERSION; }

rung_error_code rung_status_code(const rung_status* status) { return status == nullptr ? RUNG_OK : status->code; }
const char* rung_status_message(const rung_status* status) { return status == nullptr ? "" : status->message.c_str(); }
int32_t rung_status_exit_code(const rung_status* status) {
  return status == nullptr ? 0 : exit_code_of(abi_detail::error_code(status->code));
}
void rung_status_free(rung_status* status) {
  if (status != &kOutOfMemory) delete status;
}
void rung_string_free(char* text) { std::free(text); }

rung_status* rung_options_create(rung_options** out) {
  return guarded("rung_options_create", [&]() -> rung_status* {
    if (out == nullptr) return invalid("rung_options_create: no place to put the options");
    *out = new rung_options();
    return nullptr;
  });
}
void rung_options_free(rung_options* options) { delete options; }

rung_status* rung_options_set(rung_options* options, const char* key, const char* value) {
  return guarded("rung_options_set", [&]() -> rung_status* {
    if (options == nullptr || key == nullptr || value == nullptr) return invalid("rung_options_set: options, key and value are required");
    if (auto* st = not_utf8("rung_options_set", "the key", key)) return st;
    if (auto* st = not_utf8("rung_options_set", fmt::format("the value of {}", key), value)) return st;
    if (auto st = options->set.set(key, value); !st) return fail(st.error());
    return nullptr;
  });
}

rung_status* rung_options_add_model(rung_options* options, const char* name, const char* path, const char* role) {
  return guarded("rung_options_add_model", [&]() -> rung_status* {
    if (options == nullptr || name == nullptr || path == nullptr || role == nullptr) {
      return invalid("rung_options_add_model: options, name, path and role are required");
    }
    if (auto* st = not_utf8("rung_options_add_model", "the name", name)) return st;
    if (auto* st = not_utf8("rung_options_add_model", fmt::format("model {}'s path", name), path)) return st;
    if (auto* st = not_utf8("rung_options_add_model", fmt::format("model {}'s role", name), role)) return st;
    if (auto st = options->set.add_model(name, path, role); !st) return fail(st.error());
    return nullptr;
  });
}

rung_status* rung_options_set_progress(rung_options* options, rung_progress_fn callback, void* user) {
  return guarded("rung_options_set_progress", [&]() -> rung_status* {
    if (options == nullptr) return invalid("rung_options_set_progress: no options");
    options->set.set_progress(callback, user);
    return nullptr;
  });
}

rung_status* rung_engine_start(const rung_options* options, rung_engine** out) {
  return guarded("rung_engine_start", [&]() -> rung_status* {
    if (options == nullptr || out == nullptr) return invalid("rung_engine_start: options and a place to put the engine are required");
    // The ABI's contract: a model's file is there when the engine starts (the core
    // also serves a model whose file went missing later, from the rung below).
    if (auto st = options->set.check_model_files(); !st) return fail(st.error());
    auto engine_options = options->set.engine_options();
    if (!engine_options) return fail(engine_options.error());
    auto engine = core::Engine::start(std::move(*engine_options));
    if (!engine) return fail(engine.error());
    *out = new rung_engine{std::move(*engine)};
    return nullptr;
  });
}
void rung_engine_free(rung_engine* engine) { delete engine; }

char* rung_engine_about_line(const rung_engine* engine) {
  return engine == nullptr ? nullptr : guarded_text([&] { return engine->engine->about_line(); });
}
char* rung_engine_chosen_rung(const rung_engine* engine) {
  return engine == nullptr ? nullptr : guarded_text([&] { return engine->engine->chosen_rung(); });
}
char* rung_engine_chosen_reason(const rung_engine* engine) {
  return engine == nullptr ? nullptr : guarded_text([&] { return engine->engine->chosen_reason(); });
}
char* rung_engine_progress_line(const rung_engine* engine) {
  return engine == nullptr ? nullptr : guarded_text([&] { return engine->engine->progress().line(); });
}
char* rung_engine_decision_json(const rung_engine* engine) {
  return engine == nullptr ? nullptr : guarded_text([&] { return engine->engine->decision_json(); });
}
int32_t rung_engine_probe_done(const rung_engine* engine) { return engine != nullptr && engine->engine->probe_done() ? 1 : 0; }
int32_t rung_engine_wait_until_settled(const rung_engine* engine, int64_t timeout_ms) {
  if (engine == nullptr) return 0;
  if (timeout_ms < 0) {
    engine->engine->wait_until_settled();
    return 1;
  }
  // The core saturates: a timeout too long to add to the clock waits for ever.
  return engine->engine->wait_until_settled_for(std::chrono::milliseconds(timeout_ms)) ? 1 : 0;
}

rung_status* rung_engine_open_job(rung_engine* engine, rung_job** out) {
  return guarded("rung_engine_open_job", [&]() -> rung_status* {
    if (engine == nullptr || out == nullptr) return invalid("rung_engine_open_job: an engine and a place to put the job are required");
    auto job = engine->engine->open_job();
    if (!job) return fail(job.error());
    auto made = std::make_unique<rung_job>();
    made->job = std::move(*job);
    *out = made.release();
    return nullptr;
  });
}
void rung_job_free(rung_job* job) { delete job; }
const char* rung_job_rung(const rung_job* job) { return job == nullptr ? "" : job->job->rung().c_str(); }
char* rung_job_model_ids_json(const rung_job* job) {
  return job == nullptr ? nullptr : guarded_text([&] { return json_text(nlohmann::json(job->job->model_ids())); });
}

rung_status* rung_job_session(rung_job* job, const char* model_name, rung_session** out) {
  return guarded("rung_job_session", [&]() -> rung_status* {
    if (job == nullptr || model_name == nullptr || out == nullptr) {
      return invalid("rung_job_session: a job, a model name and a place to put the session are required");
    }
    if (auto* st = not_utf8("rung_job_session", "the model name", model_name)) return st;
    auto s = job->job->session(model_name);
    if (!s) return fail(s.error());
    *out = session_of(*job, *s);
    return nullptr;
  });
}

const char* rung_session_model_name(const rung_session* s) { return s == nullptr ? "" : s->session->model_name().c_str(); }
const char* rung_session_model_id(const rung_session* s) { return s == nullptr ? "" : s->session->model_id().c_str(); }
const char* rung_session_rung(const rung_session* s) { return s == nullptr ? "" : s->session->rung().c_str(); }
const char* rung_session_placement_reason(const rung_session* s) { return s == nullptr ? "" : s->session->placement_reason().c_str(); }

const char* rung_element_type_name(rung_element_type type) {
  ElementType t = element_type_from_onnx(type);
  return t == ElementType::kUnsupported ? "unknown" : element_type_name(t);
}

size_t rung_session_describe(const rung_session* s, int32_t which) {
  if (s == nullptr) return 0;
  return which == RUNG_INPUTS ? s->session->inputs().size() : which == RUNG_OUTPUTS ? s->session->outputs().size() : 0;
}

rung_status* rung_session_io(const rung_session* s, int32_t which, size_t index, rung_io_info* info) {
  return guarded("rung_session_io", [&]() -> rung_status* {
    if (s == nullptr || info == nullptr) return invalid("rung_session_io: a session and an info to fill are required");
    if (info->struct_size < sizeof(size_t)) return invalid("rung_session_io: set info->struct_size to sizeof(rung_io_info)");
    if (which != RUNG_INPUTS && which != RUNG_OUTPUTS) return invalid(fmt::format("rung_session_io: which is {}, not RUNG_INPUTS or RUNG_OUTPUTS", which));
    const auto& ios = which == RUNG_INPUTS ? s->session->inputs() : s->session->outputs();
    const auto& held = which == RUNG_INPUTS ? s->inputs : s->outputs;
    if (index >= ios.size()) {
      return invalid(fmt::format("model {} has {} {}; there is no number {}", s->session->model_name(), ios.size(),
                                 which == RUNG_INPUTS ? "inputs" : "outputs", index));
    }
    rung_io_info full{};
    full.struct_size = info->struct_size;
    full.name = ios[index].name.c_str();
    full.element_type = static_cast<rung_element_type>(onnx_data_type(ios[index].type));
    full.shape = ios[index].shape.data();
    full.rank = ios[index].shape.size();
    full.dim_names = held[index].dim_names.data();
    // An older caller's smaller struct gets the members it knows of.
    std::memcpy(info, &full, std::min(info->struct_size, sizeof full));
    return nullptr;
  });
}

rung_status* rung_value_create_view(const char* name, rung_element_type type, const int64_t* shape, size_t rank, const void* data,
                                    size_t byte_size, rung_value** out) {
  return guarded("rung_value_create_view", [&]() -> rung_status* {
    if (name == nullptr || out == nullptr) return invalid("rung_value_create_view: a name and a place to put the value are required");
    if (auto* st = not_utf8("rung_value_create_view", "the input name", name)) return st;
    auto t = element_type_of(name, type);
    if (!t) return fail(t.error());
    if (*t == ElementType::kString) return invalid(fmt::format("input '{}': a string tensor is made with rung_value_create_strings", name));
    auto dims = shape_of(name, shape, rank);
    if (!dims) return fail(dims.error());
    auto need = tensor_bytes(fmt::format("input '{}'", name), *t, *dims, UINT64_MAX);
    if (!need) return fail(need.error());
    if (*need != byte_size) {
      return invalid(fmt::format("input '{}' holds {} bytes, its shape {} of {} needs {}", name, byte_size, shape_string(*dims),
                                 element_type_name(*t), *need));
    }
    if (data == nullptr && byte_size > 0) return invalid(fmt::format("input '{}': {} bytes at a NULL pointer", name, byte_size));
    auto v = std::make_unique<rung_value>();
    v->name = name;
    v->type = *t;
    v->onnx_type = type;
    v->shape = std::move(*dims);
    v->data = data;
    v->size = byte_size;
    *out = v.release();
    return nullptr;
  });
}

rung_status* rung_value_create_strings(const char* name, const int64_t* shape, size_t rank, const char* const* strings, size_t count,
                                       rung_value** out) {
  return guarded("rung_value_create_strings", [&]() -> rung_status* {
    if (name == nullptr || out == nullptr) return invalid("rung_value_create_strings: a name and a place to put the value are required");
    if (auto* st = not_utf8("rung_value_create_strings", "the input name", name)) return st;
    auto dims = shape_of(name, shape, rank);
    if (!dims) return fail(dims.error());
    const auto n = *element_count(*dims);
    if (n != count) return invalid(fmt::format("input '{}' holds {} strings, its shape {} needs {}", name, count, shape_string(*dims), n));
    if (count > 0 && strings == nullptr) return invalid(fmt::format("input '{}': {} strings at a NULL pointer", name, count));
    auto v = std::make_unique<rung_value>();
    v->name = name;
    v->type = ElementType::kString;
    v->onnx_type = RUNG_STRING;
    v->shape = std::move(*dims);
    for (size_t i = 0; i < count; ++i) {
      if (strings[i] == nullptr) return invalid(fmt::format("input '{}': string {} is NULL", name, i));
      v->strings.emplace_back(strings[i]);
    }
    *out = v.release();
    return nullptr;
  });
}

void rung_value_free(rung_value* value) { delete value; }
const char* rung_value_name(const rung_value* v) { return v == nullptr ? "" : v->name.c_str(); }
rung_element_type rung_value_element_type(const rung_value* v) {
  return static_cast<rung_element_type>(v == nullptr ? 0 : v->onnx_type);
}
const int64_t* rung_value_shape(const rung_value* v, size_t* rank) {
  if (rank != nullptr) *rank = v == nullptr ? 0 : v->shape.size();
  return v == nullptr ? nullptr : v->shape.data();
}
const void* rung_value_data(const rung_value* v, size_t* byte_size) {
  const bool has = v != nullptr && v->type != ElementType::kString;
  if (byte_size != nullptr) *byte_size = has ? v->size : 0;
  return has ? v->data : nullptr;
}
size_t rung_value_string_count(const rung_value* v) { return v == nullptr ? 0 : v->strings.size(); }
const char* rung_value_string(const rung_value* v, size_t index) {
  return v == nullptr || index >= v->strings.size() ? nullptr : v->strings[index].c_str();
}

rung_status* rung_session_run(rung_session* s, const rung_value* const* inputs, size_t n_inputs, rung_value*** outputs,
                              size_t* n_outputs) {
  return guarded("rung_session_run", [&]() -> rung_status* {
    if (s == nullptr || outputs == nullptr || n_outputs == nullptr) {
      return invalid("rung_session_run: a session and places to put the outputs are required");
    }
    if (n_inputs > 0 && inputs == nullptr) return invalid(fmt::format("model {}: {} inputs at a NULL pointer", s->session->model_name(), n_inputs));
    std::vector<InputView> views;
    views.reserve(n_inputs);
    for (size_t i = 0; i < n_inputs; ++i) {
      const rung_value* v = inputs[i];
      if (v == nullptr) return invalid(fmt::format("model {}: input {} is NULL", s->session->model_name(), i));
      views.push_back({v->name, v->type, v->shape, v->data, v->size, v->type == ElementType::kString ? &v->strings : nullptr});
    }
    auto ran = s->session->run_views(views);
    if (!ran) return fail(ran.error());
    auto out = std::make_unique<rung_value*[]>(ran->size());
    std::vector<std::unique_ptr<rung_value>> made;
    for (auto& t : *ran) {
      auto v = std::make_unique<rung_value>();
      v->name = std::move(t.name);
      v->type = t.type;
      v->onnx_type = onnx_data_type(t.type);
      v->shape = std::move(t.shape);
      v->owned = std::move(t.bytes);
      v->strings = std::move(t.strings);
      v->data = v->owned.data();
      v->size = v->owned.size();
      made.push_back(std::move(v));
    }
    for (size_t i = 0; i < made.size(); ++i) out[i] = made[i].release();
    *n_outputs = made.size();
    *outputs = out.release();
    return nullptr;
  });
}

const void* rung_session_ort_api(const rung_session* s) { return s == nullptr ? nullptr : s->session->ort_api(); }
uint32_t rung_session_ort_api_version(const rung_session* s) { return s == nullptr ? 0 : s->session->ort_api_version(); }
void* rung_session_ort_session(const rung_session* s) { return s == nullptr ? nullptr : s->session->ort_session(); }

void rung_values_free(rung_value** values, size_t count) {
  if (values == nullptr) return;
  for (size_t i = 0; i < count; ++i) delete values[i];
  delete[] values;
}

}  // extern "C"
