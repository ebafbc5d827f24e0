// The engine: one per process. A background thread (low priority) runs the probe
// and then builds the chosen rung's engines; jobs snapshot what has landed when
// they open and keep it; sessions are shared between jobs that place a model the
// same way.
#include "rung/ratio_text.h"
#include "rung/engine_core.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/thread_limit.h"
#include "engine/builder.h"
#include "engine/placement.h"
#include "rung/json_text.h"
#include "os/regular_file.h"
#include "os/this_process.h"
#include "os/worker_location.h"
#include "probe/cache.h"
#include "probe/launch.h"
#include "probe/outcome.h"
#include "rung/cpus.h"
#include "rung/printable.h"
#include "rung/probe.h"
#include "runtime/clean_error.h"
#include "runtime/plugin_rungs.h"
#include "runtime/software_gpu.h"
#include "session/session.h"

namespace rung::core {
namespace fs = std::filesystem;
namespace {

std::string dims(const std::vector<std::int64_t>& shape) {
  std::vector<std::string> parts;
  for (auto d : shape) parts.push_back(d < 0 ? "?" : std::to_string(d));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

class SessionImpl final : public Session {
 public:
  SessionImpl(std::string name, std::string id, const RungSpec& rung, std::string reason, std::shared_ptr<PreparedSession> opened,
              const RuntimeBuild& build)
      : name_(std::move(name)),
        id_(std::move(id)),
        rung_(rung.name),
        reason_(std::move(reason)),
        run_config_(run_option_map(rung)),
        opened_(std::move(opened)),
        inputs_(described(opened_->io.inputs)),
        outputs_(described(opened_->io.outputs)),
        api_(build.api),
        api_version_(static_cast<std::uint32_t>(build.api_version)) {}

  const std::string& model_name() const override { return name_; }
  const std::string& model_id() const override { return id_; }
  const std::string& rung() const override { return rung_; }
  const std::string& placement_reason() const override { return reason_; }

  const std::vector<SessionIo>& inputs() const override { return inputs_; }
  const std::vector<SessionIo>& outputs() const override { return outputs_; }

  const void* ort_api() const override { return api_; }
  std::uint32_t ort_api_version() const override { return api_version_; }
  void* ort_session() const override { return static_cast<OrtSession*>(opened_->session); }

  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override {
    std::vector<InputView> views;
    views.reserve(inputs.size());
    for (const auto& t : inputs) views.push_back(InputView::of(t));
    return run_views(views);
  }

  Result<std::vector<Tensor>> run_views(const std::vector<InputView>& inputs) override {
    RUNG_RETURN_IF_ERROR(check_inputs(inputs));
    auto out = run_session_views(*opened_, inputs, run_config_);
    if (!out) return Error{out.error().code, fmt::format("model {} on {}: {}", name_, rung_, out.error().message)};
    return out;
  }

 private:
  static std::vector<SessionIo> described(const std::vector<TensorInfo>& declared) {
    std::vector<SessionIo> out;
    for (const auto& d : declared) out.push_back({d.name, d.type, d.shape, d.symbolic_dims});
    return out;
  }

  Status check_inputs(const std::vector<InputView>& inputs) const {
    auto bad = [&](const std::string& what) { return Error{ErrorCode::kInvalidArgument, fmt::format("model {}: {}", name_, what)}; };
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (inputs[j].name == inputs[i].name) {
          return bad(fmt::format("input '{}' is given twice (as number {} and number {}); give each input once", printable(inputs[i].name, 200), j, i));
        }
      }
    }
    for (const auto& t : inputs) {
      auto it = std::find_if(opened_->io.inputs.begin(), opened_->io.inputs.end(), [&](const TensorInfo& i) { return i.name == t.name; });
      if (it == opened_->io.inputs.end()) {
        std::vector<std::string> names;
        for (const auto& i : opened_->io.inputs) names.push_back(i.name);
        return bad(fmt::format("has no input '{}' (its inputs: {})", printable(t.name, 200), fmt::join(names, ", ")));
      }
      if (t.type != it->type) {
        return bad(fmt::format("input '{}' is {}, expected {}", t.name, element_type_name(t.type), element_type_name(it->type)));
      }
      bool shape_ok = t.shape.size() == it->shape.size();
      for (std::size_t a = 0; shape_ok && a < t.shape.size(); ++a) shape_ok = it->shape[a] < 0 || it->shape[a] == t.shape[a];
      if (!shape_ok) return bad(fmt::format("input '{}' has shape {}, expected {}", t.name, dims(t.shape), dims(it->shape)));
      if (!t.consistent()) {
        auto need = tensor_bytes(fmt::format("input '{}'", t.name), t.type, t.shape, UINT64_MAX);
        if (!need) return bad(need.error().message);
        if (t.type == ElementType::kString) {
          return bad(fmt::format("input '{}' holds {} strings, its shape {} needs {}", t.name, t.strings == nullptr ? 0 : t.strings->size(),
                                 dims(t.shape), element_count(t.shape).ok() ? *element_count(t.shape) : 0));
        }
        return bad(fmt::format("input '{}' holds {} bytes, its shape {} needs {}", t.name, t.size, dims(t.shape), *need));
      }
    }
    for (const auto& i : opened_->io.inputs) {
      bool given = std::any_of(inputs.begin(), inputs.end(), [&](const InputView& t) { return t.name == i.name; });
      if (!given) return bad(fmt::format("input '{}' ({} {}) is missing", i.name, element_type_name(i.type), dims(i.shape)));
    }
    return {};
  }

  std::string name_, id_, rung_, reason_;
  std::map<std::string, std::string> run_config_;  // sessions are only run inside a job
  std::shared_ptr<PreparedSession> opened_;
  std::vector<SessionIo> inputs_, outputs_;
  const OrtApi* api_;  // the build this process installed: lives as long as the process
  std::uint32_t api_version_;
};

std::string engine_build_failed(const RungSpec& rung, const std::string& why) {
  return fmt::format("its {} engine failed to build ({})", rung.display, why);
}

StartFacts facts_of_ladder(const Hardware& hardware, const RuntimeBuild& build, const std::vector<RungSpec>& ladder) {
  StartFacts facts;
  facts.runtime_version = build.version;
  for (const Platform* p : recognise_platforms(hardware)) facts.platforms.push_back(p->id);
  // A platform rung counts only when this build carries its provider: the probe would only fail it.
  for (const auto& r : ladder) {
    if (r.append == AppendMethod::kPluginDevice || r.append == AppendMethod::kNone || build.has_provider(r.provider)) {
      facts.rungs.push_back(r.name);
    }
  }
  return facts;
}

}  // namespace

struct Engine::State {
  EngineOptions options;
  Hardware hardware;
  RuntimeDiscovery discovery;
  RuntimeBuild runtime;
  // Made by the first session (ort_process()).
  std::mutex process_mutex;
  OrtProcess* process = nullptr;

  Result<OrtProcess*> ort_process() {
    std::lock_guard lock(process_mutex);
    if (process == nullptr) {
      auto installed = OrtProcess::install(runtime);
      if (!installed) return installed.error();
      process = *installed;
    }
    return process;
  }
  std::vector<RungSpec> ladder;  // plugins, the platform's rungs this build carries, the CPU
  int threads = 1;
  std::map<std::string, ModelChoice> choices;  // by choose_models
  const std::string launch = new_launch_id();  // this start: a worker's death during a build counts once per launch

  mutable std::mutex mutex;
  mutable std::condition_variable settled_cv;
  bool probe_done = false;
  bool settled = false;
  std::optional<ProbeOutcome> outcome;
  std::string probe_error;
  std::string probe_settings_refused;  // the probe's error when a setting the caller gave was refused
  PlacementSnapshot snapshot;
  EngineProgress progress;
  std::vector<std::string> demotions;  // for the about line
  // Shared by every job that placed a model the same way.
  std::map<std::string, std::shared_ptr<PreparedSession>> sessions;
  std::atomic<bool> stop{false};
  std::thread background;
  bool background_ended = false;  // under mutex; settled_cv tells


  const ModelRegistration* model(const std::string& name) const {
    for (const auto& m : options.models) {
      if (m.name == name) return &m;
    }
    return nullptr;
  }

  const RungSpec& cpu() const { return ladder.back(); }

  // The models whose files are for this rung; the CPU serves every one.
  std::vector<ModelRegistration> models_for(const RungSpec& rung) const {
    std::vector<ModelRegistration> out;
    for (const auto& m : options.models) {
      bool serves = m.rungs.empty() || rung.append == AppendMethod::kNone ||
                    std::find(m.rungs.begin(), m.rungs.end(), rung.name) != m.rungs.end();
      if (serves) out.push_back(m);
    }
    return out;
  }

  void notify_progress() {
    EngineProgress p;
    {
      std::lock_guard lock(mutex);
      p = progress;
    }
    // Once the engine is being freed its application hears nothing more: a background
    // left running in this process (isolate=false) must not call into freed callers.
    if (options.on_progress && !stop) options.on_progress(p);
  }

  ProbeOptions probe_options() const {
    ProbeOptions o;
    static_cast<ProbeSettings&>(o) = options;  // the worker as found at start()
    for (const auto& m : options.models) o.models.push_back({m.name, m.f32, m.inputs, m.derived});
    o.threads = threads;
    o.stop = &stop;
    return o;
  }

  // A system library the background cannot do without (libcrypto, for a digest:
  // rung/result.h's LibraryUnavailable) ends the background with its reason, never the process.
  void run_background() {
    run_background_work();
    {
      std::lock_guard lock(mutex);
      background_ended = true;
    }
    settled_cv.notify_all();
  }

  // Anything else thrown there (text that is not UTF-8 reaching a JSON writer, a bug)
  // ends the background the same way: an application's process is never aborted from
  // the engine's thread, and the floor keeps serving.
  void run_background_work() {
    try {
      background_work();
    } catch (const LibraryUnavailable& e) {
      end_background_with(e.what());
    } catch (const std::exception& e) {
      end_background_with(fmt::format("the engine's background stopped: {}", printable(e.what(), 500)));
    } catch (...) {
      end_background_with("the engine's background stopped on an unknown error");
    }
  }

  void end_background_with(const std::string& why) {
    {
      std::lock_guard lock(mutex);
      if (!probe_done) probe_error = why;
      probe_done = true;
      progress.failures.push_back(why);
      progress.done = true;
      progress.building.clear();
      settled = true;
    }
    settled_cv.notify_all();
    notify_progress();
  }

  // The background: the probe, then the chosen rung's engines, then the CPU rung's optimised graphs.
  void background_work() {
    lower_this_thread_priority();
    auto probed = run_probe(probe_options());
    RungSpec chosen = cpu();
    {
      std::lock_guard lock(mutex);
      if (probed) {
        outcome = *probed;
        for (const auto& r : ladder) {
          if (r.name == probed->chosen) chosen = r;
        }
        snapshot.chosen = chosen;
        snapshot.below.clear();
        for (const auto& r : ladder) {
          if (r.name == probed->fallback && r.append != AppendMethod::kNone) snapshot.below.push_back(r);
        }
        snapshot.below.push_back(cpu());
      } else {
        probe_error = probed.error().message;
        if (probed.error().code == ErrorCode::kInvalidArgument) probe_settings_refused = probe_error;
      }
      probe_done = true;
      progress.total = chosen.compiles_engines || chosen.append == AppendMethod::kNone ? models_for(chosen).size() : 0;
    }
    settled_cv.notify_all();
    notify_progress();

    if (chosen.compiles_engines) build_engines_for(chosen, /*counted=*/true);
    // The CPU rung serves every model until its engine lands, and some for good: its optimised graph loads faster.
    if (!stop) build_engines_for(cpu(), /*counted=*/chosen.append == AppendMethod::kNone);
    {
      std::lock_guard lock(mutex);
      progress.done = true;
      progress.building.clear();
      settled = true;
    }
    settled_cv.notify_all();
    notify_progress();
  }

  // Under the lock: a model that stays below the chosen rung is named in the
  // progress line as the final table names it ("det stays on CPU: why"), one
  // line per model, a later finding replacing an earlier one. False when unchanged.
  bool set_stays_on(const std::string& model, const std::string& rung_display, const std::string& why) {
    const std::string prefix = model + " stays on ";
    const std::string line = fmt::format("{}{}: {}", prefix, rung_display, why);
    auto it = std::find_if(progress.failures.begin(), progress.failures.end(), [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
    if (it == progress.failures.end()) {
      progress.failures.push_back(line);
    } else if (*it != line) {
      *it = line;
    } else {
      return false;
    }
    return true;
  }

  // A job found the model served lower than the landing said (a session failed to open).
  void note_stays_on(const std::string& model, const std::string& rung_display, const std::string& why) {
    bool changed = false;
    {
      std::lock_guard lock(mutex);
      changed = set_stays_on(model, rung_display, why);
    }
    if (changed) notify_progress();
  }

  // Under the lock: the rung a job will serve the model from now, as placements() orders them.
  std::string serving_rung(const std::string& name) const {
    const ModelRegistration* m = model(name);
    return m == nullptr ? cpu().display : placements(*m, snapshot).front().rung.display;
  }

  void build_engines_for(const RungSpec& rung, bool counted) {
    EngineBuildPlan plan;
    plan.build = runtime;
    plan.allow_writable_runtime = options.runtimes.allow_writable_by_others;
    plan.hardware = hardware;
    plan.rung = rung;
    plan.models = models_for(rung);
    plan.cache_dir = options.cache_dir;
    plan.worker = options.isolate ? options.worker : fs::path();  // found at start()
    plan.cancel = &stop;
    plan.memory_limit_mb = options.worker_memory_limit_mb;
    plan.deadline = options.build_deadline;
    plan.tensorrt_workspace_bytes = options.tensorrt_workspace_bytes;
    plan.input_seed = probe_options().seed;
    plan.launch = launch;
    const bool is_cpu = rung.append == AppendMethod::kNone;
    build_engines(
        plan,
        [&](const EngineLanding& l, std::size_t) {
          {
            std::lock_guard lock(mutex);
            if (!l.file.empty()) {
              (is_cpu ? snapshot.cpu_forms : snapshot.engines)[l.model] = l.file;
              if (!l.rewrite.empty()) snapshot.engine_rewrites[l.model] = l.rewrite;
              if (!l.replaced.empty()) snapshot.engine_replaced[l.model] = l.replaced;
            } else if (!is_cpu) {
              const std::string why = brief_reason(l.failure);
              snapshot.engine_failures[l.model] = why;
              set_stays_on(l.model, serving_rung(l.model), engine_build_failed(rung, why));
              demotions.push_back(fmt::format("{} engine failed: {}", l.model, why));
            }
            if (counted) ++progress.landed;
            progress.building.clear();
          }
          if (counted) notify_progress();
        },
        [&](const std::string& model) {
          {
            std::lock_guard lock(mutex);
            progress.building = model;
          }
          if (counted) notify_progress();
        },
        stop);
  }
};

std::string EngineProgress::line() const {
  std::string out;
  if (!done || landed < total) out = fmt::format("Preparing engines · {} of {}", landed, total);
  for (const auto& f : failures) out += (out.empty() ? "" : " · ") + f;
  return out;
}

Engine::Engine(std::shared_ptr<State> state) : state_(std::move(state)) {}

Engine::~Engine() {
  // A bounded quit: the probe's and the builds' workers are killed as they see `stop`
  // (within some 20 ms), and the background ends without deciding or caching anything.
  // Work in this process (isolate=false) cannot be interrupted: after a second it is
  // left to end by itself when the options say so (the C ABI's), holding its own
  // reference to the state and calling nothing back; else waited for.
  state_->stop = true;
  bool ended = false;
  {
    std::unique_lock lock(state_->mutex);
    ended = state_->settled_cv.wait_for(lock, std::chrono::seconds(1), [&] { return state_->background_ended; });
  }
  if (!state_->background.joinable()) return;
  if (ended || !state_->options.leave_in_process_work_on_quit) {
    state_->background.join();
  } else {
    state_->background.detach();
  }
}

Result<std::shared_ptr<Engine>> Engine::start(EngineOptions options) {
  if (options.cache_dir.empty()) return Error{ErrorCode::kInvalidArgument, "the engine needs a cache directory"};
  if (std::error_code ec; fs::exists(options.cache_dir, ec) && !fs::is_directory(options.cache_dir, ec)) {
    const Error wrong = wrong_kind(options.cache_dir, fs::status(options.cache_dir, ec).type(), WantedKind::kDirectory,
                                   "the cache directory " + printable(options.cache_dir.string(), 300));
    return Error{wrong.code, wrong.message + ": nothing could ever be cached there"};
  }
  if (options.models.empty()) return Error{ErrorCode::kInvalidArgument, "the engine needs at least one registered model"};
  // The numbers first: nothing is loaded for a start that cannot go on.
  RUNG_RETURN_IF_ERROR(check_thread_count(options.inference_threads, "inference threads"));
  RUNG_RETURN_IF_ERROR(check_deadline(options.probe_deadline, "the probe deadline"));
  RUNG_RETURN_IF_ERROR(check_deadline(options.build_deadline, "the build deadline"));
  for (const auto& m : options.models) {
    if (m.name.empty()) return Error{ErrorCode::kInvalidArgument, "a registered model has no name"};
    RUNG_RETURN_IF_ERROR(check_model_file_kind(m.name, m.f32));
  }
  // Isolation holds or the start fails: never a silent probe in this process, where a provider that aborts ends it.
  if (options.isolate) {
    std::vector<std::string> looked;
    fs::path worker = find_engine_worker(options.worker, options.runtimes.read_environment, &looked);
    if (worker.empty()) {
      return Error{ErrorCode::kNotFound,
                   fmt::format("isolation is on and no rung-probe-worker was found to run the probe and engine builds in (looked at: {}); "
                               "name one with the worker option, or turn isolate off to probe in this process, where a provider "
                               "that crashes ends the process",
                               fmt::join(looked, "; "))};
    }
    options.worker = std::move(worker);
  }
  auto state = std::make_shared<State>();
  state->hardware = detect_hardware(options.hardware_root);
  // With a valid probe cache only the build it names is opened (probe/launch.h); the background probe checks the cache in full.
  auto launch = discover_launch_runtimes(options.runtimes, state->hardware, probe_cache_file(options.cache_dir), /*allow_warm=*/true);
  if (!launch) return launch.error();
  state->discovery = std::move(launch->discovery);
  state->runtime = *state->discovery.chosen_build();
  // ONNX Runtime's environment (Ort::Env: some 20 ms of its own set-up in 1.30) is made when the first
  // session opens, not here: a launch's decision needs none. Another build already in this process is
  // refused now, as installing would refuse it.
  if (const OrtProcess* running = OrtProcess::current(); running != nullptr && running->build().library != state->runtime.library) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("this process already runs ONNX Runtime {} ({}); cannot switch to {}", running->build().version,
                             running->build().library.string(), state->runtime.library.string())};
  }
  // As the probe will (RUNG_SOFTWARE_GPU=1), before the ladder names its rungs, so that both name WebGPU alike;
  // a failure here is the probe's to report.
  (void)lend_software_gpu_if_asked(false, options.runtimes.read_environment);
  auto ladder = effective_ladder(state->hardware, state->runtime, options.plugin_dirs, options.runtimes.allow_writable_plugins,
                                 options.runtimes.read_plugin_environment);
  if (!ladder) return ladder.error();
  state->ladder = std::move(*ladder);
  if (options.choose_models) {
    auto chosen = options.choose_models(facts_of_ladder(state->hardware, state->runtime, state->ladder), options.models);
    if (!chosen) return chosen.error();
    state->choices = std::move(*chosen);
  }
  state->threads = options.inference_threads > 0 ? options.inference_threads
                                                  : std::min(default_inference_threads(state->hardware.cpu), usable_cpus());
  state->snapshot.chosen = state->ladder.back();
  state->snapshot.below = {state->ladder.back()};
  state->options = std::move(options);
  // The thread keeps the state alive: it may outlive the engine (~Engine).
  state->background = std::thread([state] { state->run_background(); });
  return std::shared_ptr<Engine>(new Engine(state));
}

namespace {

// Under the state's mutex, held by the caller.
std::string about_line_of(const Engine::State& s) {
  std::string line;
  if (!s.probe_done) {
    line = fmt::format("{} · ONNX Runtime {} · probing", s.cpu().display, s.runtime.version);
  } else if (s.outcome) {
    line = s.outcome->about_line();
  } else {
    line = fmt::format("{} · ONNX Runtime {} · probe failed: {}", s.cpu().display, s.runtime.version, s.probe_error);
  }
  for (const auto& d : s.demotions) line += " · " + d;
  return line;
}

// Under the state's mutex, held by the caller.
std::string chosen_reason_of(const Engine::State& s) {
  if (!s.probe_done) return "the floor serves until the probe reports";
  if (!s.outcome) return "the probe failed: " + s.probe_error;
  const auto& o = *s.outcome;
  if (!o.forced_by.empty()) return "forced by " + o.forced_by;
  for (const auto& r : o.rungs) {
    if (r.rung != o.chosen) continue;
    // Surely faster only when every model's interval lies under the floor's time;
    // otherwise the acceptance ratio admitted it.
    bool surely_faster = true;
    for (const auto& m : r.models) surely_faster = surely_faster && m.ratio() > 0 && (m.pairs > 0 ? m.ratio_high : m.ratio()) < 1.0;
    if (surely_faster) return "faster than the floor and faithful to it";
    return fmt::format("within {} the floor's time (acceptance ratio) and faithful to it", ratio_text(s.options.acceptance_ratio));
  }
  if (!o.model_errors.empty())
    // Whole on its own (an application has no "above"): each model and why.
    return o.model_errors.size() == 1 ? fmt::format("the floor could not run a probe model: {}", o.model_errors.front())
                                      : fmt::format("the floor could not run {} probe models: {}", o.model_errors.size(), fmt::join(o.model_errors, " "));
  return "no rung above the floor was both faster and faithful";
}

}  // namespace

std::string Engine::about_line() const {
  std::lock_guard lock(state_->mutex);
  return about_line_of(*state_);
}

std::string Engine::chosen_rung() const {
  std::lock_guard lock(state_->mutex);
  return state_->snapshot.chosen.name;
}

std::string Engine::chosen_reason() const {
  std::lock_guard lock(state_->mutex);
  return chosen_reason_of(*state_);
}

Engine::ProbeProblems Engine::probe_problems() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->outcome) return {{}, false, false, state_->probe_settings_refused};
  return {state_->outcome->model_errors, state_->outcome->inputs_refused, state_->outcome->model_unloadable, {}};
}

bool Engine::probe_done() const {
  std::lock_guard lock(state_->mutex);
  return state_->probe_done;
}

EngineProgress Engine::progress() const {
  std::lock_guard lock(state_->mutex);
  return state_->progress;
}

int Engine::inference_threads() const { return state_->threads; }

const RuntimeBuild& Engine::runtime() const { return state_->runtime; }

const std::map<std::string, ModelChoice>& Engine::model_choices() const { return state_->choices; }

std::string Engine::decision_json() const {
  // One lock for the whole document: its about line, reason and state describe one moment.
  std::lock_guard lock(state_->mutex);
  const State& s = *state_;
  const std::string about = about_line_of(s);
  const std::string reason = chosen_reason_of(s);
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : s.options.models) {
    nlohmann::json entry = {{"name", m.name}, {"variant", nullptr}};
    if (auto c = s.choices.find(m.name); c != s.choices.end()) {
      entry["variant"] = {{"name", c->second.variant}, {"model_id", c->second.model_id}, {"reason", c->second.reason}};
    }
    // What a job opened now would load first (a failure to open it falls to the next, said in the session's reason).
    const auto ways = placements(m, s.snapshot);
    const Placement& now = ways.front();
    entry["serves"] = {{"rung", now.rung.name}, {"display", now.rung.display}, {"form", numeric_form_name(now.form)},
                       {"model_id", model_id(m.name, now.form)}, {"fp16", now.fp16}, {"reason", now.reason}};
    nlohmann::json engine = {{"state", "none"}, {"reason", ""}};
    if (s.snapshot.engines.count(m.name) != 0) {
      engine["state"] = "landed";
    } else if (auto f = s.snapshot.engine_failures.find(m.name); f != s.snapshot.engine_failures.end()) {
      engine = {{"state", "failed"}, {"reason", f->second}};
    } else if (s.progress.building == m.name) {
      engine["state"] = "building";
    }
    entry["engine"] = engine;
    models.push_back(entry);
  }
  nlohmann::json doc = {
      {"schema", "rung-engine-decision"},
      {"schema_version", 1},
      {"state", !s.probe_done ? "probing" : s.outcome ? "decided" : "probe failed"},
      {"settled", s.settled},
      {"about", about},
      {"chosen", {{"rung", s.snapshot.chosen.name}, {"display", s.snapshot.chosen.display}, {"reason", reason}}},
      {"runtime", {{"version", s.runtime.version}, {"library", s.runtime.library.string()}}},
      {"probe", s.outcome ? outcome_json(*s.outcome) : nlohmann::json(nullptr)},
      {"probe_error", s.probe_error},
      {"models", models},
      {"engines", {{"total", s.progress.total}, {"landed", s.progress.landed}, {"building", s.progress.building},
                   {"failures", s.progress.failures}, {"done", s.progress.done}}},
      {"demotions", s.demotions}};
  // Text from files, logs and providers may hold any bytes: replaced, never thrown on.
  return json_text(doc, 2);
}

StartFacts start_facts(const Hardware& hardware, const RuntimeBuild& build, const std::vector<fs::path>& plugin_dirs) {
  auto ladder = effective_ladder(hardware, build, plugin_dirs);
  // A plugin refused by the path policy is never loaded: the facts are the rungs without the plugins.
  if (!ladder) ladder = effective_ladder(hardware, build, {});
  return facts_of_ladder(hardware, build, ladder ? *ladder : std::vector<RungSpec>{});
}

void Engine::wait_until_settled() const {
  std::unique_lock lock(state_->mutex);
  state_->settled_cv.wait(lock, [&] { return state_->settled; });
}

bool Engine::wait_until_settled_for(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(state_->mutex);
  if (timeout.count() <= 0) return state_->settled;
  // A wait longer than a century is a wait for ever: now() + INT64_MAX ms would wrap.
  if (timeout >= std::chrono::hours(24 * 365 * 100)) {
    state_->settled_cv.wait(lock, [&] { return state_->settled; });
    return true;
  }
  return state_->settled_cv.wait_for(lock, timeout, [&] { return state_->settled; });
}

namespace {

class JobImpl final : public Job {
 public:
  JobImpl(std::shared_ptr<Engine::State> state, PlacementSnapshot snapshot)
      : state_(std::move(state)), snapshot_(std::move(snapshot)) {}

  const std::string& rung() const override { return snapshot_.chosen.name; }

  std::map<std::string, std::string> model_ids() const override {
    std::lock_guard lock(mutex_);
    std::map<std::string, std::string> out;
    for (const auto& [name, s] : sessions_) out[name] = s->model_id();
    return out;
  }

  Result<Session*> session(const std::string& name) override {
    std::lock_guard lock(mutex_);
    if (auto it = sessions_.find(name); it != sessions_.end()) return it->second.get();
    const ModelRegistration* m = state_->model(name);
    if (m == nullptr) return Error{ErrorCode::kInvalidArgument, fmt::format("no model named '{}' is registered", name)};
    std::string failures;
    // Why the model is below the chosen rung, for the progress line: the engine's build, then each session that failed.
    std::vector<std::string> stays_why;
    if (auto f = snapshot_.engine_failures.find(name); f != snapshot_.engine_failures.end()) {
      stays_why.push_back(engine_build_failed(snapshot_.chosen, f->second));
    }
    for (const auto& p : placements(*m, snapshot_)) {
      auto opened = open(p);
      if (!opened) {
        // Served by the rung below, and said on the about line; never an exception in the caller's loop.
        const std::string brief = brief_reason(opened.error().message);
        std::string why = fmt::format("{} on {} failed to load: {}", name, p.rung.display, brief);
        {
          std::lock_guard engine_lock(state_->mutex);
          state_->demotions.push_back(why);
        }
        failures += (failures.empty() ? "" : "; ") + why;
        stays_why.push_back(p.file == m->f32 ? fmt::format("{} failed to open it ({})", p.rung.display, brief)
                                             : fmt::format("its {} engine failed to load ({})", p.rung.display, brief));
        continue;
      }
      if (!failures.empty()) state_->note_stays_on(name, p.rung.display, fmt::format("{}", fmt::join(stays_why, "; ")));
      std::string reason = failures.empty() ? p.reason : p.reason + "; " + failures;
      auto process = state_->ort_process();  // installed by open(): the build whose table the session was built with
      if (!process) return process.error();
      auto s = std::make_unique<SessionImpl>(name, model_id(name, p.form), p.rung, reason, *opened, (*process)->build());
      Session* raw = s.get();
      sessions_[name] = std::move(s);
      return raw;
    }
    return Error{ErrorCode::kRuntime, fmt::format("model {} could not be opened on any rung: {}", name, failures)};
  }

 private:
  Result<std::shared_ptr<PreparedSession>> open(const Placement& p) {
    std::string key = fmt::format("{}|{}|{}", p.rung.name, p.file.string(), p.fp16);
    {
      std::lock_guard lock(state_->mutex);
      if (auto it = state_->sessions.find(key); it != state_->sessions.end()) return it->second;
    }
    SessionSettings settings;
    settings.rung = p.rung;
    settings.intra_op_threads = state_->threads;
    settings.provider.fp16 = p.fp16;
    settings.provider.trt_workspace_bytes = state_->options.tensorrt_workspace_bytes;
    auto process = state_->ort_process();
    if (!process) return process.error();
    auto session = open_session(**process, p.file, settings);
    if (!session) return session.error();
    auto prepared = prepare_session(std::move(*session));
    if (!prepared) return prepared.error();
    auto opened = std::make_shared<PreparedSession>(std::move(*prepared));
    std::lock_guard lock(state_->mutex);
    return state_->sessions.emplace(key, opened).first->second;
  }

  std::shared_ptr<Engine::State> state_;
  PlacementSnapshot snapshot_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<SessionImpl>> sessions_;
};

}  // namespace

Result<std::unique_ptr<Job>> Engine::open_job() {
  PlacementSnapshot snapshot;
  {
    std::lock_guard lock(state_->mutex);
    snapshot = state_->snapshot;
  }
  return std::unique_ptr<Job>(new JobImpl(state_, std::move(snapshot)));
}

}  // namespace rung::core
