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
#include "rung/path_text.h"
#include "rung/printable.h"
#include "rung/variants.h"

namespace rung::capi {
namespace {

Error bad(const std::string& key, const std::string& value, const std::string& why) {
  return Error{ErrorCode::kInvalidArgument, fmt::format("option {}={}: {}", key, value, why)};
}

Result<bool> flag(const std::string& key, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  return bad(key, value, "expected true or false");
}

Result<long long> whole(const std::string& key, const std::string& value, long long lo, long long hi, const std::string& unit,
                        const std::string& why = {}) {
  std::string text = value;
  if (auto problem = number_text::check_signed(text, lo, hi, unit, why); !problem.empty()) return bad(key, value, problem);
  return std::stoll(text);
}

Result<double> real(const std::string& key, const std::string& value, double lo, double hi) {
  std::string text = value;
  if (auto problem = number_text::check_real(text, lo, hi, "", ""); !problem.empty()) return bad(key, value, problem);
  return std::stod(text);
}

Result<std::filesystem::path> path(const std::string& key, const std::string& value) {
  if (value.empty()) return bad(key, value, "expected a path, not an empty text");
  return path_from_utf8(value);
}

Result<NumericForm> form_named(const std::string& key, const std::string& name) {
  for (NumericForm f : kNumericForms) {
    if (name == numeric_form_name(f) && f != NumericForm::kF32) return f;
  }
  return Error{ErrorCode::kInvalidArgument, fmt::format("option {}: '{}' is not a derived form (i8, f16, a16w8, a16w16 or w8)", key, name)};
}

constexpr long long kMaxDeadlineMs = std::chrono::duration_cast<std::chrono::milliseconds>(kMaxDeadline).count();

}  // namespace

ModelRegistration* OptionSet::model(const std::string& name) {
  auto it = std::find_if(options_.models.begin(), options_.models.end(), [&](const ModelRegistration& m) { return m.name == name; });
  return it == options_.models.end() ? nullptr : &*it;
}

Status OptionSet::set(const std::string& key, const std::string& value) {
  auto& o = options_;
  // Each key's setter; a number's range is stated where it is parsed.
  using Setter = std::function<Status(const std::string&)>;
  auto set_path = [&](std::filesystem::path& into) -> Setter {
    return [&, key](const std::string& v) -> Status {
      auto p = path(key, v);
      if (!p) return p.error();
      into = *p;
      return {};
    };
  };
  auto set_flag = [&](bool& into) -> Setter {
    return [&, key](const std::string& v) -> Status {
      auto b = flag(key, v);
      if (!b) return b.error();
      into = *b;
      return {};
    };
  };
  auto set_ms = [&](std::chrono::milliseconds& into) -> Setter {
    return [&, key](const std::string& v) -> Status {
      auto n = whole(key, v, 1, kMaxDeadlineMs, "milliseconds");
      if (!n) return n.error();
      into = std::chrono::milliseconds(*n);
      return {};
    };
  };
  const std::map<std::string, Setter> setters = {
      {"cache_dir", set_path(o.cache_dir)},
      {"plugin_dir",
       [&](const std::string& v) -> Status {
         auto p = path(key, v);
         if (!p) return p.error();
         o.plugin_dirs.push_back(*p);
         return {};
       }},
      {"runtime_dir",
       [&](const std::string& v) -> Status {
         auto p = path(key, v);
         if (!p) return p.error();
         o.runtimes.explicit_dir = *p;
         return {};
       }},
      {"runtime_default_locations", set_flag(o.runtimes.include_default_locations)},
      {"variant_manifest", set_path(manifest_)},
      {"deployment", set_path(deployment_)},
      // One switch for every RUNG_* variable; runtime_environment is its first name, kept.
      {"environment", set_flag(o.runtimes.read_environment)},
      {"runtime_environment", set_flag(o.runtimes.read_environment)},
      {"worker", set_path(o.worker)},
      {"isolate", set_flag(o.isolate)},
      {"forced_rung",
       [&](const std::string& v) -> Status {
         if (v.empty()) return bad(key, v, "expected a rung id such as cpu or rung_sim_ep");
         o.forced_rung = v;
         return {};
       }},
      {"inference_threads",
       [&](const std::string& v) -> Status {
         const int cpus = usable_cpus();
         auto n = whole(key, v, 0, cpus, "threads", fmt::format("0: physical cores minus two; this machine gives rung {} logical CPUs", cpus));
         if (!n) return n.error();
         o.inference_threads = static_cast<int>(*n);
         return {};
       }},
      {"probe_runs",
       [&](const std::string& v) -> Status {
         auto n = whole(key, v, 1, 1000, "runs");
         if (!n) return n.error();
         o.probe_runs = static_cast<int>(*n);
         return {};
       }},
      {"acceptance_ratio",
       [&](const std::string& v) -> Status {
         auto r = real(key, v, kMinAcceptanceRatio, kMaxAcceptanceRatio);
         if (!r) return r.error();
         o.acceptance_ratio = *r;
         return {};
       }},
      {"probe_deadline_ms", set_ms(o.probe_deadline)},
      {"worker_memory_mb",
       [&](const std::string& v) -> Status {
         auto n = whole(key, v, 0, 1 << 24, "MiB", "0: no limit");
         if (!n) return n.error();
         o.worker_memory_limit_mb = static_cast<std::uint64_t>(*n);
         return {};
       }},
      {"build_deadline_ms", set_ms(o.build_deadline)},
      {"hardware_root", set_path(o.hardware_root)},
      {"tensorrt_workspace_mb",
       [&](const std::string& v) -> Status {
         auto n = whole(key, v, 1, 1 << 20, "MiB");
         if (!n) return n.error();
         o.tensorrt_workspace_bytes = static_cast<std::size_t>(*n) << 20;
         return {};
       }},
  };
  if (auto it = setters.find(key); it != setters.end()) return it->second(value);

  // manifest_variable.NAME: what ${NAME} stands for in the variant manifest's paths.
  if (key.rfind("manifest_variable.", 0) == 0) {
    const std::string name = key.substr(18);
    if (name.empty() || name.find_first_of("${}") != std::string::npos) return bad(key, value, "expected manifest_variable.NAME, NAME as ${NAME} names it");
    manifest_variables_[name] = value;
    return {};
  }
  // model.NAME.input_spec and model.NAME.form.FORM: NAME may itself hold dots.
  if (key.rfind("model.", 0) == 0) {
    const std::string rest = key.substr(6);
    const std::string spec_suffix = ".input_spec";
    if (rest.size() > spec_suffix.size() && rest.compare(rest.size() - spec_suffix.size(), spec_suffix.size(), spec_suffix) == 0) {
      const std::string name = rest.substr(0, rest.size() - spec_suffix.size());
      ModelRegistration* m = model(name);
      if (m == nullptr) return bad(key, value, fmt::format("no model named '{}' was added (rung_options_add_model first)", name));
      auto spec = InputSpec::from_json_file(path_from_utf8(value));
      if (!spec) return Error{spec.error().code, fmt::format("option {}: {}", key, spec.error().message)};
      m->inputs = std::move(*spec);
      return {};
    }
    if (auto at = rest.rfind(".form."); at != std::string::npos && at > 0) {
      const std::string name = rest.substr(0, at);
      ModelRegistration* m = model(name);
      if (m == nullptr) return bad(key, value, fmt::format("no model named '{}' was added (rung_options_add_model first)", name));
      auto form = form_named(key, rest.substr(at + 6));
      if (!form) return form.error();
      auto p = path(key, value);
      if (!p) return p.error();
      std::erase_if(m->derived, [&](const DerivedForm& d) { return d.form == *form; });
      m->derived.push_back({*form, *p});
      return {};
    }
  }
  std::vector<std::string> known;
  for (const auto& [k, _] : setters) known.push_back(k);
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown option key '{}' (known: {}, manifest_variable.NAME, model.NAME.input_spec, model.NAME.form.FORM)", printable(key, 200),
                                                        fmt::join(known, ", "))};
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
    if (auto s = variants::attach(o, *manifest, deployment ? &*deployment : nullptr); !s) return s.error();
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
