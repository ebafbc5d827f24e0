// The probe's walk: floor first, then each rung of the ladder, each measured in
// a child process (or in process, under the attempt-file rule), the first rung
// that is both faster and faithful taken. The decision around it (the cache, the
// fingerprint, the lock) is probe/decision.cpp's.
#include "rung/ratio_text.h"
#include "rung/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "core/thread_limit.h"
#include "jobs/measure.h"
#include "jobs/runner.h"
#include "os/file_hash.h"
#include "os/file_lock.h"
#include "os/regular_file.h"
#include "os/termination.h"
#include "os/this_process.h"
#include "os/work_dir.h"
#include "os/worker_location.h"
#include "probe/attempts.h"
#include "probe/decision.h"
#include "rung/directory.h"
#include "rung/setting_names.h"
#include "runtime/dependencies.h"
#include "runtime/plugin_rungs.h"
#include "runtime/software_gpu.h"
#include "session/tensor_file.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

SpeedRule speed_rule(const ProbeOptions& o) {
  SpeedRule rule;
  rule.acceptance_ratio = o.acceptance_ratio;
  rule.min_gain = o.min_gain;
  rule.confidence = o.confidence;
  return rule;
}

bool stopped(const ProbeOptions& o) { return o.stop != nullptr && o.stop->load(); }

// A job's figures as the probe's table shows them.
Measurement measured(const std::string& model, Verdict verdict, const ProbeJobResult& r, double floor_median_ms) {
  Measurement m;
  m.model = model;
  m.verdict = verdict;
  m.reason = r.error;
  m.build_ms = r.build_ms;
  m.first_run_ms = r.first_run_ms;
  m.median_ms = r.median_ms;
  m.floor_median_ms = floor_median_ms;
  return m;
}

// What the rung ran, from the profile of one run: the floor's CPU nodes, or a rung's accelerated ones.
void fill_placement(const ProbeJobResult& r, bool cpu_rung, Measurement& m) {
  m.placement_known = r.placement.known;
  m.placed_nodes = r.placement.rung_nodes(cpu_rung);
  m.total_nodes = r.placement.total_nodes();
  m.placed_time_share = r.placement.rung_time_share(cpu_rung);
  m.placement = r.placement.known ? r.placement.describe() : r.placement_error;
}

struct FloorRun {
  const RegisteredModel* model = nullptr;
  double median_ms = 0;
  fs::path outputs;
};

// A job's outcome as the probe judges it: the verdict, and the job's figures.
std::pair<Verdict, ProbeJobResult> judged(const JobOutcome& outcome) {
  ProbeJobResult r;
  try {
    if (outcome.result.is_object()) r = outcome.result.get<ProbeJobResult>();
  } catch (const nlohmann::json::exception& e) {
    r.error = fmt::format("the worker wrote a malformed result: {}", e.what());
    return {Verdict::kFailed, r};
  }
  if (!outcome.ok()) r.error = outcome.describe();
  switch (outcome.status) {
    case JobOutcome::Status::kOk: return {Verdict::kTaken, r};
    case JobOutcome::Status::kFailed: return {Verdict::kFailed, r};
    case JobOutcome::Status::kCrashed: return {Verdict::kCrashed, r};
    case JobOutcome::Status::kCancelled: return {Verdict::kFailed, r};  // the walk ends without a decision (walk())
    case JobOutcome::Status::kTimedOut: break;
  }
  r.error += fmt::format(" (a first run that compiles shaders can take longer: raise {})", setting_name(Setting::kProbeDeadline));
  r.build_ms = outcome.elapsed_ms;  // the time it was given, up to the kill
  return {Verdict::kTimedOut, r};
}

// Measures one rung on one model: in a child process through the job runner,
// or, without a worker, in this process under the attempt-file rule.
class Walker {
 public:
  Walker(const ProbeOptions& o, const RuntimeBuild& build, AttemptLedger* ledger) : o_(o), build_(build), ledger_(ledger) {
    if (o_.isolate) {
      if (fs::path worker = find_worker(o_.worker, o_.runtimes.read_environment); !worker.empty()) runner_.emplace(std::move(worker));
    }
  }

  // `floor` is the CPU rung a rung above it is timed against; null for the floor itself.
  std::pair<Verdict, ProbeJobResult> run(const RungSpec& rung, const RegisteredModel& model, const fs::path& dir,
                                         const RungSpec* floor = nullptr) {
    std::error_code ec;
    remove_tree(dir, ec);
    create_directories_unless_ending(dir, ec);
    ProbeJob job = job_for(rung, model, dir);
    job.profile = true;  // what ran where, the floor's too: one more run, profiled
    if (floor != nullptr) {
      job.paired = true;
      job.floor_rung = *floor;
      job.rule = speed_rule(o_);
      job.budget_s = o_.time_budget_s;
      job.max_pairs = o_.max_pairs;
    }
    if (stopped(o_)) return judged(JobOutcome::cancelled());
    return judged(runner_ ? runner_->run({"probe", job, o_.probe_deadline, dir, {}, o_.stop, o_.worker_memory_limit_mb}) : in_process(job));
  }

 private:
  ProbeJob job_for(const RungSpec& rung, const RegisteredModel& model, const fs::path& dir) const {
    ProbeJob job;
    job.target.runtime_library = build_.library;
    job.target.allow_writable_runtime = o_.runtimes.allow_writable_by_others;
    job.target.model = model.path;
    job.target.rung = rung;
    job.target.threads = o_.threads;
    job.model_name = model.name;
    job.inputs = model.inputs;
    job.runs = o_.probe_runs;
    job.seed = o_.seed;
    job.outputs_dir = dir / "outputs";
    return job;
  }

  JobOutcome in_process(const ProbeJob& job) {
    const bool guarded = ledger_ != nullptr && !is_cpu_floor(job.target.rung);
    if (guarded) (void)ledger_->begin(job.target.rung.name, job.model_name);
    JobOutcome outcome = JobOutcome::finished(run_probe_job(job));
    if (guarded) ledger_->end(job.target.rung.name);
    return outcome;
  }

  const ProbeOptions& o_;
  const RuntimeBuild& build_;
  AttemptLedger* ledger_;
  std::optional<JobRunner> runner_;
};

std::vector<Tensor> read_outputs(const fs::path& dir) {
  auto r = read_tensor_directory(dir);
  return r ? std::move(*r) : std::vector<Tensor>{};
}

// A rung's or a model's name as a directory of the work tree: never "..", never a path.
fs::path sanitize(const std::string& s) { return path_from_utf8(model_file_stem(s)); }

void progress(const ProbeOptions& o, const std::string& line) {
  if (o.on_progress) o.on_progress(line);
}

// In process (asked for, or no worker found): the attempt-file rule guards each build, when the cache can hold it.
std::optional<AttemptLedger> open_ledger(const ProbeSetting& s, const std::string& fingerprint, ProbeOutcome& out) {
  const ProbeOptions& o = s.o;
  if (o.isolate && !find_worker(o.worker, o.runtimes.read_environment).empty()) return std::nullopt;
  if (o.isolate) note(o, out, "no rung-probe-worker found: probing in process, under the attempt-file rule");
  if (!s.can_cache) return std::nullopt;
  std::optional<AttemptLedger> ledger(std::in_place, o.cache_dir, sha256_hex(fingerprint));
  for (const auto& line : ledger->ignored()) note(o, out, line);
  if (!ledger->leftover().empty()) {
    note(o, out, fmt::format("the last launch died while attempting {}: strike {} of {}", ledger->leftover(),
                             ledger->strikes(ledger->leftover()), kStrikesToRefuse));
  }
  return ledger;
}

// The floor: the CPU on every probe model. A model it cannot run is said in
// model_errors; when it ran none of them, the spare models are tried in turn.
std::vector<FloorRun> measure_floor(const ProbeSetting& s, Walker& walker, const fs::path& work, ProbeOutcome& out) {
  const RungSpec& cpu = s.ladder.back();
  out.floor.rung = cpu.name;
  out.floor.display = cpu.display;
  out.floor.verdict = Verdict::kTaken;
  std::vector<FloorRun> floors;
  std::vector<const RegisteredModel*> candidates = s.probe_models;
  candidates.insert(candidates.end(), s.spare_probe_models.begin(), s.spare_probe_models.end());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto* m = candidates[i];
    if (i >= s.probe_models.size() && !floors.empty()) break;
    progress(s.o, fmt::format("{} floor · {}", cpu.display, m->name));
    fs::path dir = work / "cpu" / sanitize(m->name);
    auto [verdict, r] = walker.run(cpu, *m, dir);
    out.floor.models.push_back(measured(m->name, verdict, r, r.median_ms));
    fill_placement(r, /*cpu_rung=*/true, out.floor.models.back());
    if (verdict != Verdict::kTaken) {
      if (r.stage == "inputs") out.inputs_refused = true;
      std::error_code ec;
      std::string error = r.error;
      while (!error.empty() && (error.back() == '.' || error.back() == ' ')) error.pop_back();
      // A model the floor cannot even load (damaged, an operator this build lacks) is
      // not helped by other inputs: only a failure feeding or running it asks for a spec.
      const bool feeding = r.stage == "inputs" || r.stage == "run";
      if (!fs::exists(m->path, ec)) {
        out.model_errors.push_back(fmt::format("model {}: {}.", m->name, missing_path(m->path).message));
      } else if (!feeding) {
        out.model_unloadable = true;
        // An error that names the file itself ("PATH: not an ONNX model: ...") is said once.
        const std::string named = m->path.string() + ": ";
        out.model_errors.push_back(error.rfind(named, 0) == 0 ? fmt::format("model {}: the CPU floor cannot load {}.", m->name, error)
                                                               : fmt::format("model {}: the CPU floor cannot load {}: {}.", m->name, m->path.string(), error));
      } else {
        std::string inputs = r.inputs_described.empty() ? "" : fmt::format(" Inputs fed: {}.", r.inputs_described);
        out.model_errors.push_back(fmt::format(
            "model {}: the CPU floor cannot run {}: {}.{} Give it an input spec (JSON: {{\"dims\": {{\"name\": size}}, \"values\": "
            "{{\"input\": [value]}}, \"tensors\": \"dir of .pb\"}}) with {}.",
            m->name, m->path.string(), error, inputs, setting_name(Setting::kInputSpec, m->name)));
      }
      continue;
    }
    floors.push_back({m, r.median_ms, dir / "outputs"});
  }
  return floors;
}

// The placement rule: the rung's provider ran at least the stated share of the nodes.
bool placed(const ProbeOptions& o, const Measurement& m) { return m.placement_known && m.placed_nodes > 0 && m.placed_share() >= o.min_placed_share; }

std::string not_placed_reason(const ProbeOptions& o, const Measurement& m) {
  if (!m.placement_known) return m.placement.empty() ? "no placement profile" : m.placement;
  return fmt::format("{} (the rung must run at least {:.0f}% of the nodes)", m.placement, o.min_placed_share * 100);
}

// The speed rule's call as a verdict and its reason.
void judge_clock(const ProbeOptions& o, const ProbeJobResult& r, Measurement& m) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < r.run_ms.size() && i < r.floor_run_ms.size(); ++i) {
    ratios.push_back(r.floor_run_ms[i] > 0 ? r.run_ms[i] / r.floor_run_ms[i] : 1.0);
  }
  const SpeedJudgement j = judge_speed(ratios, speed_rule(o));
  m.ratio_median = j.ratio;
  m.ratio_low = j.low;
  m.ratio_high = j.high;
  m.pairs = j.pairs;
  const std::string figures = fmt::format("{} the floor's time over {} paired runs (interval {})", ratio_text(j.ratio), j.pairs, ratio_range_text(j.low, j.high));
  switch (j.call) {
    case SpeedCall::kFaster: return;
    case SpeedCall::kSlower:
      m.verdict = Verdict::kSlower;
      m.reason = fmt::format("{}; the acceptance ratio is {}", figures, ratio_text(o.acceptance_ratio));
      return;
    case SpeedCall::kWithinNoise:
    case SpeedCall::kNeedMore:
      m.verdict = Verdict::kSlowerWithinNoise;
      m.reason = fmt::format("{}; taken only when the interval lies under {} (the acceptance ratio {} less {:.0f}%)", figures,
                             ratio_text(j.bar), ratio_text(o.acceptance_ratio), o.min_gain * 100);
      return;
  }
}

// One model on a rung above the floor: taken only when placed, faithful to the floor's outputs and fast enough.
Measurement measure_against(const ProbeOptions& o, const FloorRun& f, Verdict verdict, const ProbeJobResult& r, const fs::path& dir) {
  Measurement meas = measured(f.model->name, verdict, r, f.median_ms);
  if (verdict != Verdict::kTaken) return meas;
  if (r.floor_median_ms > 0) meas.floor_median_ms = r.floor_median_ms;  // the CPU timed beside it, under the same load
  fill_placement(r, /*cpu_rung=*/false, meas);  // a rung above the floor is never the CPU
  auto cmp = compare_outputs(read_outputs(f.outputs), read_outputs(dir / "outputs"), o.tolerance);
  for (const auto& t : cmp.outputs) {
    meas.max_abs_diff = std::max(meas.max_abs_diff, t.max_abs);
    meas.max_rel_diff = std::max(meas.max_rel_diff, t.max_rel);
  }
  judge_clock(o, r, meas);
  if (!placed(o, meas)) {
    meas.verdict = Verdict::kNotPlaced;
    meas.reason = not_placed_reason(o, meas);
  } else if (!cmp.faithful()) {
    meas.verdict = Verdict::kUnfaithful;
    meas.reason = cmp.first_problem();
  }
  return meas;
}

// Every probe model on one rung; the rung's verdict is its first model's that was not taken.
// What the dependency check found names a failure to load, in doctor's words.
RungOutcome measure_rung(const ProbeOptions& o, const RungSpec& rung, const RungSpec& floor_rung, const std::vector<FloorRun>& floors,
                         const RungDependencies& deps, Walker& walker, const fs::path& work) {
  RungOutcome ro{rung.name, rung.display, Verdict::kTaken, {}, {}};
  for (const auto& f : floors) {
    progress(o, fmt::format("{} · {}", rung.display, f.model->name));
    fs::path dir = work / sanitize(rung.name) / sanitize(f.model->name);
    auto [verdict, r] = walker.run(rung, *f.model, dir, &floor_rung);
    Measurement meas = measure_against(o, f, verdict, r, dir);
    if (verdict == Verdict::kFailed && !deps.problems.empty()) meas.reason = deps.words();
    if (meas.verdict != Verdict::kTaken && ro.verdict == Verdict::kTaken) {
      ro.verdict = meas.verdict;
      ro.reason = meas.reason;
    }
    ro.models.push_back(std::move(meas));
  }
  return ro;
}

// The ladder above the floor, best first: the first rung taken is chosen. When
// it compiles engines, the walk goes on to the first non-compiling rung taken
// below it, which serves until the engines land.
void climb(const ProbeSetting& s, const std::vector<FloorRun>& floors, AttemptLedger* ledger, Walker& walker, const fs::path& work,
           ProbeOutcome& out) {
  bool taken = false;
  bool need_fallback = false;
  out.chosen = s.ladder.back().name;
  out.chosen_display = s.ladder.back().display;
  for (std::size_t i = 0; i + 1 < s.ladder.size() && !stopped(s.o); ++i) {
    const RungSpec& rung = s.ladder[i];
    RungOutcome ro{rung.name, rung.display, Verdict::kNotTried, {}, {}};
    if (taken && (!need_fallback || rung.compiles_engines)) {
      ro.reason = "a higher rung was taken";
    } else if (floors.empty()) {
      ro.reason = "no probe model runs on the floor";
    } else if (ledger != nullptr && ledger->refused(rung.name)) {
      ro.verdict = Verdict::kRefused;
      ro.reason = fmt::format("the process died {} launches in a row while building it", ledger->strikes(rung.name));
    } else if (const RungDependencies deps = check_rung_dependencies(rung, *s.build); deps.certain_to_fail) {
      // Before anything loads it (runtime/dependencies.h): a rung whose own files are
      // absent, or from another ONNX Runtime, is not started.
      ro.verdict = Verdict::kFailed;
      ro.reason = deps.words();
    } else {
      ro = measure_rung(s.o, rung, s.ladder.back(), floors, deps, walker, work);
      if (ro.verdict == Verdict::kTaken && !taken) {
        taken = true;
        need_fallback = rung.compiles_engines;
        out.chosen = rung.name;
        out.chosen_display = rung.display;
      } else if (ro.verdict == Verdict::kTaken) {
        need_fallback = false;
        out.fallback = rung.name;
      }
    }
    out.rungs.push_back(std::move(ro));
  }
}

// Measures the floor and the ladder in a fresh work directory (in the cache
// directory, else under $TMPDIR), removed after.
Status walk(const ProbeSetting& s, const std::string& fingerprint, ProbeOutcome& out) {
  const ProbeOptions& o = s.o;
  auto work = WorkDir::create("probe-work", s.can_cache ? o.cache_dir : fs::path());
  if (!work) return work.error();
  std::optional<AttemptLedger> ledger = open_ledger(s, fingerprint, out);
  Walker walker(o, *s.build, ledger ? &*ledger : nullptr);
  const std::vector<FloorRun> floors = measure_floor(s, walker, work->path(), out);
  climb(s, floors, ledger ? &*ledger : nullptr, walker, work->path(), out);
  // Stopped part way: nothing was decided, and nothing is cached.
  if (stopped(o)) return Error{ErrorCode::kRuntime, "the probe was stopped before it decided (the engine is quitting)"};
  return {};
}

}  // namespace

Result<ProbeOutcome> run_probe(const ProbeOptions& o) {
  auto decided = decide_probe(o, &walk);
  if (!decided) return decided.error();
  return std::move(**decided);  // with a walk, always decided
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
    lower_this_thread_priority();
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
