#include "capi/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <map>

#include "os/regular_file.h"
#include "rung/cpus.h"
#include "rung/limits.h"
#include "rung/number_text.h"
#include "rung/option_table.h"
#include "rung/path_text.h"
#include "rung/printable.h"
#include "rung/variants.h"

namespace rung::capi {
namespace {

Error bad(const std::string& key, const std::string& value, const std::string& why) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("option {}={}: {}", key, value, why)};
}

// A value as its row says to read it, each kind in one place.
struct OptionValue {
  std::filesystem::path path;
  bool flag = false;
  long long whole = 0;
  double real = 0;
  std::string text;
};

Result<OptionValue> read_value(const OptionRow& row, const std::string& key, const std::string& value) {
  OptionValue v;
  std::string text = value;
  switch (row.kind) {
    case OptionKind::kPath:
    case OptionKind::kPathEach:
      if (value.empty()) return bad(key, value, "expected a path, not an empty text");
      v.path = path_from_utf8(value);
      return v;
    case OptionKind::kFlag:
      if (value != "true" && value != "false") return bad(key, value, "expected true or false");
      v.flag = value == "true";
      return v;
    case OptionKind::kWhole: {
      const auto hi = static_cast<long long>(option_hi(row));
      if (auto problem = number_text::check_signed(text, static_cast<long long>(row.lo), hi, std::string(row.unit), option_range_why(row));
          !problem.empty()) {
        return bad(key, value, problem);
      }
      v.whole = std::stoll(text);
      return v;
    }
    case OptionKind::kReal:
      if (auto problem = number_text::check_real(text, row.lo, option_hi(row), "", ""); !problem.empty()) return bad(key, value, problem);
      v.real = std::stod(text);
      return v;
    case OptionKind::kText:
      if (value.empty()) return bad(key, value, fmt::format("expected {}, not an empty text", row.doc));
      [[fallthrough]];
    case OptionKind::kAnyText:
      v.text = value;
      return v;
  }
  return bad(key, value, "a kind of option this engine does not read");
}

Result<NumericForm> form_named(const std::string& key, const std::string& name) {
  for (NumericForm f : kNumericForms) {
    if (name == numeric_form_name(f) && f != NumericForm::kF32) return f;
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("option {}: '{}' is not a derived form (i8, f16, a16w8, a16w16 or w8)", key, name)};
}

}  // namespace

ModelRegistration* OptionSet::model(const std::string& name) {
  auto it = std::find_if(options_.models.begin(), options_.models.end(), [&](const ModelRegistration& m) { return m.name == name; });
  return it == options_.models.end() ? nullptr : &*it;
}

Status OptionSet::set(const std::string& key, const std::string& value) {
  const OptionRow* row = find_option(key);
  if (row == nullptr) {
    std::vector<std::string_view> known;
    for (const auto& r : option_table()) known.push_back(r.key);
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("unknown option key '{}' (known: {})", printable(key, 200), fmt::join(known, ", "))};
  }
  auto v = read_value(*row, key, value);
  if (!v) return v.error();
  auto& o = options_;
  // Where each knob of the table lands; the value is already read and in range.
  using Store = std::function<Status(const OptionValue&)>;
  const std::map<std::string_view, Store> stores = {
      {"cache_dir", [&](const OptionValue& x) { o.cache_dir = x.path; return Status{}; }},
      {"plugin_dir", [&](const OptionValue& x) { o.plugin_dirs.push_back(x.path); return Status{}; }},
      {"runtime_dir", [&](const OptionValue& x) { o.runtimes.explicit_dir = x.path; return Status{}; }},
      {"runtime_default_locations", [&](const OptionValue& x) { o.runtimes.include_default_locations = x.flag; return Status{}; }},
      // One switch for every RUNG_* variable; runtime_environment is its first name, kept.
      {"environment", [&](const OptionValue& x) { o.runtimes.read_environment = x.flag; return Status{}; }},
      {"runtime_environment", [&](const OptionValue& x) { o.runtimes.read_environment = x.flag; return Status{}; }},
      {"worker", [&](const OptionValue& x) { o.worker = x.path; return Status{}; }},
      {"isolate", [&](const OptionValue& x) { o.isolate = x.flag; return Status{}; }},
      {"forced_rung", [&](const OptionValue& x) { o.forced_rung = x.text; return Status{}; }},
      {"inference_threads", [&](const OptionValue& x) { o.inference_threads = static_cast<int>(x.whole); return Status{}; }},
      {"probe_runs", [&](const OptionValue& x) { o.probe_runs = static_cast<int>(x.whole); return Status{}; }},
      {"acceptance_ratio", [&](const OptionValue& x) { o.acceptance_ratio = x.real; return Status{}; }},
      {"probe_deadline_ms", [&](const OptionValue& x) { o.probe_deadline = std::chrono::milliseconds(x.whole); return Status{}; }},
      {"build_deadline_ms", [&](const OptionValue& x) { o.build_deadline = std::chrono::milliseconds(x.whole); return Status{}; }},
      {"worker_memory_mb", [&](const OptionValue& x) { o.worker_memory_limit_mb = static_cast<std::uint64_t>(x.whole); return Status{}; }},
      {"hardware_root", [&](const OptionValue& x) { o.hardware_root = x.path; return Status{}; }},
      {"tensorrt_workspace_mb",
       [&](const OptionValue& x) { o.tensorrt_workspace_bytes = static_cast<std::size_t>(x.whole) << 20; return Status{}; }},
      {"variant_manifest", [&](const OptionValue& x) { manifest_ = x.path; return Status{}; }},
      {"deployment", [&](const OptionValue& x) { deployment_ = x.path; return Status{}; }},
      {"manifest_variable.NAME", [&](const OptionValue& x) -> Status {
         const std::string name = key.substr(18);
         if (name.find_first_of("${}") != std::string::npos) return bad(key, value, "expected manifest_variable.NAME, NAME as ${NAME} names it");
         manifest_variables_[name] = x.text;
         return {};
       }},
      {"model.NAME.input_spec", [&](const OptionValue& x) -> Status {
         const std::string name = key.substr(6, key.size() - 6 - std::string_view(".input_spec").size());
         ModelRegistration* m = model(name);
         if (m == nullptr) return bad(key, value, fmt::format("no model named '{}' was added (rung_options_add_model first)", name));
         auto spec = InputSpec::from_json_file(x.path);
         if (!spec) return Error{spec.error().code, fmt::format("option {}: {}", key, spec.error().message)};
         m->inputs = std::move(*spec);
         return {};
       }},
      {"model.NAME.form.FORM", [&](const OptionValue& x) -> Status {
         const auto at = key.rfind(".form.");
         const std::string name = key.substr(6, at - 6);
         ModelRegistration* m = model(name);
         if (m == nullptr) return bad(key, value, fmt::format("no model named '{}' was added (rung_options_add_model first)", name));
         auto form = form_named(key, key.substr(at + 6));
         if (!form) return form.error();
         std::erase_if(m->derived, [&](const DerivedForm& d) { return d.form == *form; });
         m->derived.push_back({*form, x.path});
         return {};
       }},
  };
  auto it = stores.find(row->key);
  if (it == stores.end()) return Error{ErrorCode::kUnsupported, fmt::format("option {}: in the table, but the engine has nowhere to keep it", key)};
  return it->second(*v);
}

OptionSet::OptionSet() {
  // Hermetic: an embedded engine reads none of rung's variables unless its application
  // opts in (`environment`), and never RUNG_PLUGIN_DIR, whose plugins would run in the
  // application's own process.
  options_.runtimes.read_environment = false;
  options_.runtimes.read_plugin_environment = false;
  // An application's quit is bounded, even with work in its own process (rung.h).
  options_.leave_in_process_work_on_quit = true;
  // A runtime_dir the application names serves, or the start says why (never another build in its place).
  options_.runtimes.explicit_dir_must_serve = true;
  options_.runtimes.explicit_refusal_keeps_its_kind = true;
  // Its kit's runtimes, found from where librung_engine was loaded: beside it, then the
  // kit's share/rung/runtimes. Never beside the application's executable (runtime_dir names one).
  options_.runtimes.defaults_from = KitAnchor::kEngineLibrary;
}

Status OptionSet::add_model(const std::string& name, const std::string& file, const std::string& role) {
  if (auto problem = model_name_problem(name); !problem.empty()) return Error{ErrorCode::kInvalidArgument, problem};
  if (model(name) != nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("a model named '{}' was already added", name)};
  if (file.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("model {}: no file given", name)};
  ModelRegistration m;
  m.name = name;
  m.f32 = path_from_utf8(file);
  bool known = false;
  for (Role r : {Role::kDetector, Role::kEmbedder, Role::kSegmenter, Role::kGeneric}) {
    if (role == role_name(r)) {
      m.role = r;
      known = true;
    }
  }
  if (!known) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("model {}: role '{}' is not one of detector, embedder, segmenter, generic", name, role)};
  }
  options_.models.push_back(std::move(m));
  return {};
}

Status OptionSet::check_model_files() const {
  // A manifest's files are checked as it is loaded, and each variant's when the engine starts.
  for (const auto& m : options_.models) {
    std::vector<std::filesystem::path> files = {m.f32};
    for (const auto& d : m.derived) files.push_back(d.path);
    for (const auto& f : files) {
      if (auto st = check_regular_file(f); !st) return Error{st.error().code, fmt::format("model {}: {}", m.name, st.error().message)};
    }
  }
  return {};
}

void OptionSet::set_progress(rung_progress_fn callback, void* user) {
  callback_ = callback;
  user_ = user;
}

Result<core::EngineOptions> OptionSet::engine_options() const {
  core::EngineOptions o = options_;
  if (!manifest_.empty()) {
    if (!o.models.empty()) {
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("both a variant manifest ({}) and rung_options_add_model name models: use one", printable(manifest_.string(), 300))};
    }
    auto manifest = variants::load_manifest(manifest_, manifest_variables_, o.runtimes.read_environment);
    if (!manifest) return manifest.error();
    std::optional<variants::Deployment> deployment;
    if (!deployment_.empty()) {
      auto loaded = variants::load_deployment(deployment_);
      if (!loaded) return loaded.error();
      deployment = std::move(*loaded);
    }
    RUNG_RETURN_IF_ERROR(variants::attach(o, *manifest, deployment ? &*deployment : nullptr));
  } else if (!deployment_.empty()) {
    return Error{ErrorCode::kInvalidArgument, "a deployment is given without a variant manifest: it says which of a manifest's rungs are provisioned"};
  }
  if (callback_ != nullptr) {
    o.on_progress = [callback = callback_, user = user_](const core::EngineProgress& p) {
      const std::string line = p.line();
      rung_progress out{};
      out.struct_size = sizeof out;
      out.total = p.total;
      out.landed = p.landed;
      out.building = p.building.c_str();
      out.line = line.c_str();
      out.done = p.done ? 1 : 0;
      callback(user, &out);
    };
  }
  return o;
}

}  // namespace rung::capi
