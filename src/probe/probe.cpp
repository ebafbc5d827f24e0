// The probe's walk: floor first, then each rung of the ladder, each measured in
// a child process (or in process, under the attempt-file rule), the first rung
// that is both faster and faithful taken; the outcome cached under a fingerprint.
#include "rung/probe.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "jobs/measure.h"
#include "os/atomic_file.h"
#include "os/child_process.h"
#include "os/file_lock.h"
#include "os/read_file.h"
#include "os/worker_location.h"
#include "probe/attempts.h"
#include "probe/cache.h"
#include "probe/fingerprint.h"
#include "runtime/dependencies.h"
#include "runtime/plugin_rungs.h"
#include "session/tensor_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

std::string tail_lines(std::string text, std::size_t lines) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::size_t pos = text.size();
  for (std::size_t i = 0; i < lines; ++i) {
    if (pos == 0) return text;
    auto p = text.rfind('\n', pos - 1);
    if (p == std::string::npos) return text;
    pos = p;
  }
  return text.substr(pos + 1);
}

struct FloorRun {
  const RegisteredModel* model = nullptr;
  double median_ms = 0;
  fs::path outputs;
};

class Walker {
 public:
  Walker(const ProbeOptions& o, const RuntimeBuild& build, fs::path work, AttemptLedger* ledger)
      : o_(o), build_(build), work_(std::move(work)), ledger_(ledger) {
    if (o_.isolate) worker_ = find_worker(o_.worker);
  }

  bool isolated() const { return !worker_.empty(); }

  // Runs one job; the verdict is kFailed/kCrashed/kTimedOut when it did not finish well.
  std::pair<Verdict, ProbeJobResult> run(const RungSpec& rung, const RegisteredModel& model, const fs::path& dir) {
    ProbeJob job;
    job.runtime_library = build_.library;
    job.allow_writable_runtime = o_.runtimes.allow_writable_by_others;
    job.model_name = model.name;
    job.model = model.path;
    job.inputs = model.inputs;
    job.rung = rung;
    job.runs = o_.runs;
    job.threads = o_.threads;
    job.seed = o_.seed;
    job.outputs_dir = dir / "outputs";
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    if (!isolated()) return in_process(job);

    ProbeJobResult r;
    if (auto s = write_file_atomically(dir / "job.json", job_to_json(job)); !s) {
      r.error = s.error().message;
      return {Verdict::kFailed, r};
    }
    auto child = run_child(worker_, {(dir / "job.json").string()}, dir / "worker.log", o_.deadline);
    if (!child.started) {
      r.error = fmt::format("could not start {}: {}", worker_.string(), child.start_error);
      return {Verdict::kFailed, r};
    }
    if (child.timed_out) {
      r.error = fmt::format("no answer within {:.0f} s; killed", std::chrono::duration<double>(o_.deadline).count());
      r.build_ms = child.elapsed_ms;  // the time it was given, up to the kill
      return {Verdict::kTimedOut, r};
    }
    if (child.signal != 0) {
      r.error = child.signal_name();
      return {Verdict::kCrashed, r};
    }
    auto parsed = result_from_json(read_text_file(dir / "result.json"));
    if (!parsed) {
      r.error = fmt::format("worker exited with code {} and no result: {}", child.exit_code,
                            tail_lines(read_text_file(dir / "worker.log"), 3));
      return {Verdict::kFailed, r};
    }
    return {parsed->ok ? Verdict::kTaken : Verdict::kFailed, *parsed};
  }

 private:
  std::pair<Verdict, ProbeJobResult> in_process(const ProbeJob& job) {
    bool guarded = ledger_ != nullptr && job.rung.name != "cpu";
    if (guarded) (void)ledger_->begin(job.rung.name, job.model_name);
    auto r = run_probe_job(job);
    if (guarded) ledger_->end(job.rung.name);
    return {r.ok ? Verdict::kTaken : Verdict::kFailed, r};
  }

  const ProbeOptions& o_;
  const RuntimeBuild& build_;
  fs::path work_;
  AttemptLedger* ledger_;
  fs::path worker_;
};

std::vector<Tensor> read_outputs(const fs::path& dir) {
  auto r = read_tensor_directory(dir);
  return r ? std::move(*r) : std::vector<Tensor>{};
}

std::string sanitize(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return out;
}

void progress(const ProbeOptions& o, const std::string& line) {
  if (o.on_progress) o.on_progress(line);
}

void note(const ProbeOptions& o, ProbeOutcome& out, std::string line) {
  if (o.on_log) o.on_log(line);
  out.log.push_back(std::move(line));
}

std::vector<std::string> rung_names(const std::vector<RungSpec>& ladder) {
  std::vector<std::string> names;
  for (const auto& r : ladder) names.push_back(r.name);
  return names;
}

Status apply_override(const ProbeOptions& o, const std::vector<RungSpec>& ladder, ProbeOutcome& out) {
  std::string forced;
  std::string by;
  if (o.forced_rung && !o.forced_rung->empty()) {
    forced = *o.forced_rung;
    by = "configuration";
  } else if (const char* env = std::getenv("RUNG_FORCE_RUNG"); env != nullptr && *env) {
    forced = env;
    by = "RUNG_FORCE_RUNG";
  }
  if (forced.empty()) return {};
  auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < ladder.size(); ++i) {
      if (ladder[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  int f = index_of(forced), c = index_of(out.chosen);
  if (f < 0) {
    std::vector<std::string> names;
    for (const auto& r : ladder) names.push_back(r.name);
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("cannot force rung '{}' (from {}): this device's ladder is {}", forced, by, fmt::join(names, ", "))};
  }
  if (f < c) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("cannot force rung '{}' (from {}): it ranks above the chosen rung '{}'; only a lower rung can be forced",
                             forced, by, out.chosen)};
  }
  out.chosen = ladder[static_cast<std::size_t>(f)].name;
  out.chosen_display = ladder[static_cast<std::size_t>(f)].display;
  out.forced_by = by;
  return {};
}

}  // namespace

Result<ProbeOutcome> run_probe(const ProbeOptions& o) {
  if (o.cache_dir.empty()) return Error{ErrorCode::kInvalidArgument, "the probe needs a cache directory"};
  if (o.runs < 1) return Error{ErrorCode::kInvalidArgument, fmt::format("runs must be at least 1, not {}", o.runs)};
  if (o.models.empty()) return Error{ErrorCode::kInvalidArgument, "no models are registered"};

  Hardware hw = detect_hardware(o.hardware_root);
  auto discovery = discover_runtimes(o.runtimes, hw);
  if (!discovery) return discovery.error();
  const RuntimeBuild& build = *discovery->chosen_build();

  std::vector<RungSpec> ladder = effective_ladder(hw, build, o.plugin_dirs);

  // The probe models: those named, else the smallest registered model.
  std::vector<const RegisteredModel*> probe_models;
  std::vector<std::string> probe_names;
  if (o.probe_models.empty()) {
    const RegisteredModel* smallest = nullptr;
    std::uintmax_t best = 0;
    for (const auto& m : o.models) {
      std::error_code ec;
      auto size = fs::file_size(m.path, ec);
      if (!ec && (smallest == nullptr || size < best)) {
        smallest = &m;
        best = size;
      }
    }
    if (smallest == nullptr) smallest = &o.models.front();
    probe_models.push_back(smallest);
  } else {
    for (const auto& name : o.probe_models) {
      auto it = std::find_if(o.models.begin(), o.models.end(), [&](const RegisteredModel& m) { return m.name == name; });
      if (it == o.models.end()) return Error{ErrorCode::kInvalidArgument, fmt::format("probe model '{}' is not registered", name)};
      probe_models.push_back(&*it);
    }
  }
  for (const auto* m : probe_models) probe_names.push_back(m->name);

  ProbeOutcome out;
  out.runtime_version = build.version;
  out.runtime_library = build.library;
  out.builds_found = discovery->builds.size();
  out.cache_file = o.cache_dir / "probe.json";

  std::error_code ec;
  fs::create_directories(o.cache_dir, ec);
  bool can_cache = !ec && ::access(o.cache_dir.c_str(), W_OK) == 0;
  if (!can_cache) {
    note(o, out, fmt::format("could not cache: {} is not writable{}", o.cache_dir.string(), ec ? " (" + ec.message() + ")" : ""));
  }

  FileHashCache hashes(o.cache_dir);
  if (!hashes.ignored_because().empty()) note(o, out, "ignored the model-hash cache, rewritten: " + hashes.ignored_because());
  FingerprintInputs fi{&build, &hw, &ladder, &o, probe_names};
  auto fingerprint = make_fingerprint(fi, hashes);
  if (!fingerprint) return fingerprint.error();
  if (can_cache) hashes.save();

  std::optional<CacheLock> lock;
  if (can_cache) {
    bool busy = false;
    auto l = CacheLock::acquire(o.cache_dir / "probe.lock", &busy);
    if (l) lock.emplace(std::move(*l));
    if (busy) note(o, out, "another process was probing this cache directory; waited for its answer");
  }

  if (!o.reprobe) {
    auto cached = read_probe_cache(out.cache_file, *fingerprint, rung_names(ladder));
    if (cached.outcome) {
      ProbeOutcome hit = std::move(*cached.outcome);
      hit.log.insert(hit.log.begin(), out.log.begin(), out.log.end());
      if (auto s = apply_override(o, ladder, hit); !s) return s.error();
      return hit;
    }
    if (!cached.ignored_because.empty()) note(o, out, "ignored the cache: " + cached.ignored_because);
  }

  fs::path work = can_cache ? o.cache_dir / "probe-work" : fs::temp_directory_path() / fmt::format("rung-probe-{}", ::getpid());
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);

  std::optional<AttemptLedger> ledger;
  if (!o.isolate || find_worker(o.worker).empty()) {
    if (o.isolate) note(o, out, "no rung-probe-worker found: probing in process, under the attempt-file rule");
    if (can_cache) {
      ledger.emplace(o.cache_dir, sha256_hex(*fingerprint));
      for (const auto& line : ledger->ignored()) note(o, out, line);
      if (!ledger->leftover().empty()) {
        note(o, out, fmt::format("the last launch died while attempting {}: strike {} of {}", ledger->leftover(),
                                      ledger->strikes(ledger->leftover()), kStrikesToRefuse));
      }
    }
  }
  Walker walker(o, build, work, ledger ? &*ledger : nullptr);

  // The floor.
  const RungSpec cpu = ladder.back();
  out.floor.rung = cpu.name;
  out.floor.display = cpu.display;
  out.floor.verdict = Verdict::kTaken;
  std::vector<FloorRun> floors;
  for (const auto* m : probe_models) {
    progress(o, fmt::format("{} floor · {}", cpu.display, m->name));
    fs::path dir = work / "cpu" / sanitize(m->name);
    auto [verdict, r] = walker.run(cpu, *m, dir);
    Measurement meas{m->name, verdict, r.error, r.build_ms, r.first_run_ms, r.median_ms, r.median_ms, 0, 0};
    out.floor.models.push_back(meas);
    if (verdict != Verdict::kTaken) {
      std::error_code e2;
      std::string what = !fs::exists(m->path, e2) ? fmt::format("{} does not exist", m->path.string())
                                                  : fmt::format("the CPU floor cannot run {}: {}", m->path.string(), r.error);
      std::string inputs = r.inputs_described.empty() ? "" : fmt::format(" Inputs fed: {}.", r.inputs_described);
      out.model_errors.push_back(fmt::format(
          "model {}: {}.{} Give it an input spec (JSON: {{\"dims\": {{\"name\": size}}, \"values\": {{\"input\": [value]}}, "
          "\"tensors\": \"dir of .pb\"}}) with --input-spec {}=FILE.",
          m->name, what, inputs, m->name));
      continue;
    }
    floors.push_back({m, r.median_ms, dir / "outputs"});
  }

  // The ladder above the floor.
  bool taken = false;
  bool need_fallback = false;  // a compiling rung was taken: find what serves until its engines land
  out.chosen = cpu.name;
  out.chosen_display = cpu.display;
  for (std::size_t i = 0; i + 1 < ladder.size(); ++i) {
    const RungSpec& rung = ladder[i];
    RungOutcome ro;
    ro.rung = rung.name;
    ro.display = rung.display;
    if (taken && (!need_fallback || rung.compiles_engines)) {
      ro.reason = "a higher rung was taken";
      out.rungs.push_back(std::move(ro));
      continue;
    }
    if (floors.empty()) {
      ro.reason = "no probe model runs on the floor";
      out.rungs.push_back(std::move(ro));
      continue;
    }
    if (ledger && ledger->refused(rung.name)) {
      ro.verdict = Verdict::kRefused;
      ro.reason = fmt::format("the process died {} launches in a row while building it", ledger->strikes(rung.name));
      out.rungs.push_back(std::move(ro));
      continue;
    }
    // Before anything loads it (runtime/dependencies.h): a rung whose own files are
    // absent, or from another ONNX Runtime, is not started; what else the check
    // finds names the failure, in doctor's words, if loading then fails.
    const RungDependencies deps = check_rung_dependencies(rung, build);
    if (deps.certain_to_fail) {
      ro.verdict = Verdict::kFailed;
      ro.reason = deps.words();
      out.rungs.push_back(std::move(ro));
      continue;
    }
    ro.verdict = Verdict::kTaken;
    for (const auto& f : floors) {
      progress(o, fmt::format("{} · {}", rung.display, f.model->name));
      fs::path dir = work / sanitize(rung.name) / sanitize(f.model->name);
      auto [verdict, r] = walker.run(rung, *f.model, dir);
      Measurement meas{f.model->name, verdict, r.error, r.build_ms, r.first_run_ms, r.median_ms, f.median_ms, 0, 0};
      if (verdict == Verdict::kFailed && !deps.problems.empty()) meas.reason = deps.words();
      if (verdict == Verdict::kTaken) {
        auto cmp = compare_outputs(read_outputs(f.outputs), read_outputs(dir / "outputs"), o.tolerance);
        for (const auto& t : cmp.outputs) {
          meas.max_abs_diff = std::max(meas.max_abs_diff, t.max_abs);
          meas.max_rel_diff = std::max(meas.max_rel_diff, t.max_rel);
        }
        if (!cmp.faithful()) {
          meas.verdict = Verdict::kUnfaithful;
          meas.reason = cmp.first_problem();
        } else if (!(r.median_ms < f.median_ms * o.acceptance_ratio)) {
          meas.verdict = Verdict::kSlower;
          meas.reason = fmt::format("median {:.3g} ms against the floor's {:.3g} ms", r.median_ms, f.median_ms);
        }
      }
      if (meas.verdict != Verdict::kTaken && ro.verdict == Verdict::kTaken) {
        ro.verdict = meas.verdict;
        ro.reason = meas.reason;
      }
      ro.models.push_back(std::move(meas));
    }
    if (ro.verdict == Verdict::kTaken && !taken) {
      taken = true;
      need_fallback = rung.compiles_engines;
      out.chosen = rung.name;
      out.chosen_display = rung.display;
    } else if (ro.verdict == Verdict::kTaken) {
      need_fallback = false;
      out.fallback = rung.name;
    }
    out.rungs.push_back(std::move(ro));
  }
  fs::remove_all(work, ec);

  if (can_cache) {
    if (auto s = write_probe_cache(out.cache_file, *fingerprint, out); !s) note(o, out, "could not cache: " + s.error().message);
  }
  if (auto s = apply_override(o, ladder, out); !s) return s.error();
  return out;
}

struct BackgroundProbe::State {
  mutable std::mutex mutex;
  mutable std::condition_variable cv;
  std::optional<Result<ProbeOutcome>> result;
  std::thread thread;
};

BackgroundProbe::BackgroundProbe(std::shared_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<BackgroundProbe> BackgroundProbe::start(ProbeOptions options) {
  auto state = std::make_shared<State>();
  state->thread = std::thread([state, options = std::move(options)] {
    // Low priority for this thread (and the workers it starts): the probe must not
    // compete with the work it is meant to speed up.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
    auto r = run_probe(options);
    std::lock_guard lock(state->mutex);
    state->result.emplace(std::move(r));
    state->cv.notify_all();
  });
  return std::unique_ptr<BackgroundProbe>(new BackgroundProbe(state));
}

BackgroundProbe::~BackgroundProbe() {
  if (state_->thread.joinable()) state_->thread.join();
}

bool BackgroundProbe::done() const {
  std::lock_guard lock(state_->mutex);
  return state_->result.has_value();
}

std::string BackgroundProbe::current_rung() const {
  std::lock_guard lock(state_->mutex);
  if (!state_->result || !*state_->result) return "cpu";
  return (*state_->result)->chosen;
}

std::optional<Result<ProbeOutcome>> BackgroundProbe::result() const {
  std::lock_guard lock(state_->mutex);
  return state_->result;
}

void BackgroundProbe::wait() const {
  std::unique_lock lock(state_->mutex);
  state_->cv.wait(lock, [&] { return state_->result.has_value(); });
}

}  // namespace rung
