// What every job runs on: one ONNX Runtime build, one model, one rung, its
// threads and provider options. One struct and one JSON form for every job
// kind (probe, bench, compile, parity), so a field is added in one place.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "os/json_form.h"
#include "runtime/plugin_rungs.h"
#include "rung/input_spec.h"
#include "rung/ladder.h"

namespace rung {

struct JobTarget {
  std::filesystem::path runtime_library;
  bool allow_writable_runtime = false;   // load a build other users can write to
  std::filesystem::path model;
  RungSpec rung;
  int threads = 0;                       // intra-op threads; 0: ONNX Runtime's default
  std::map<std::string, std::string> provider_options;  // passed through to the provider verbatim
};

// A rung as a command line names it: "cpu" or a ladder rung's name in rung.name,
// a plugin EP library (a path, or a library's file name) in rung.plugin_library.
// The worker completes it on its build (jobs/worker_rung.h).
inline RungSpec named_rung(const std::string& rung) {
  RungSpec named;
  (names_a_plugin_library(rung) ? named.plugin_library : named.name) = rung;
  return named;
}

// The JSON forms jobs speak, one key per field (from_json throws
// nlohmann::json::exception when a key is missing or of the wrong type).
RUNG_JSON_FORM(RungSpec, name, display, provider, append, form, compiles_engines, provider_libraries,
                                   plugin_library)
RUNG_JSON_FORM_WITH_DEFAULT(InputSpec, dims, values, tensors_dir, max_tensor_bytes)
RUNG_JSON_FORM(JobTarget, runtime_library, allow_writable_runtime, model, rung, threads, provider_options)

}  // namespace rung

// An empty optional is null (results carry optional figures).
NLOHMANN_JSON_NAMESPACE_BEGIN
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) { j = v ? json(*v) : json(nullptr); }
  static void from_json(const json& j, std::optional<T>& v) { v = j.is_null() ? std::nullopt : std::optional<T>(j.get<T>()); }
};
NLOHMANN_JSON_NAMESPACE_END
