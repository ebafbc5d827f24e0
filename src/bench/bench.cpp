// The bench's walk: check every input first, then for each round, each model,
// each rung (the order rotated by the round) one child process; then the
// figures, paired ratios and output comparisons.
#include "rung/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "rungs/forms.h"
#include "core/thread_limit.h"
#include "core/sample_stats.h"
#include "core/speed_rule.h"
#include "graph/onnx_file.h"
#include "graph/model_file.h"
#include "jobs/benchmark.h"
#include "jobs/runner.h"
#include "os/machine.h"
#include "os/this_process.h"
#include "os/read_file.h"
#include "os/termination.h"
#include "os/utc_now.h"
#include "os/work_dir.h"
#include "os/worker_location.h"
#include "rung/standing.h"
#include "runtime/clean_error.h"
#include "runtime/plugin_rungs.h"
#include "session/tensor_file.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

std::string sanitize(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return out;
}

std::string os_line() { return system_description(); }

// A child that ended badly, by how it ended: the classes a record carries.
std::string failure_class_of(const std::string& stage, const std::string& error) {
  if (stage == "build") {
    // A provider whose library is absent never got to try.
    if (reason_is_missing_library(error)) return "provider_unavailable";
    return "build_failed";
  }
  if (stage == "inputs") return "inputs_rejected";
  if (stage == "run") return "run_failed";
  if (stage == "runtime") return "runtime_failed";
  return "worker_failed";
}

// One model on one rung, accumulated over the rounds.
struct Cell {
  const RungSpec* rung = nullptr;
  bool failed = false;
  std::string failure_class, failure_reason;
  std::vector<double> runs, bare_runs, cached_builds;
  std::map<int, std::vector<double>> round_runs;  // each round's timed runs, in order: the pairs of the paired ratios
  std::map<int, double> round_p50;
  std::map<int, fs::path> round_outputs;
  std::optional<double> build_cold_ms;
  double first_run_ms = 0;
  double peak_rss_kb = 0;
  std::string provider_version;
  std::vector<std::string> evidence;
  NodePlacement placement;
  bool have_first = false;
};

struct ChildRun {
  bool ok = false;
  std::string failure_class, reason;
  BenchJobResult result;
};

// A job's outcome as a bench row classes it.
ChildRun judged(const JobOutcome& outcome) {
  ChildRun out;
  try {
    if (outcome.result.is_object()) out.result = outcome.result.get<BenchJobResult>();
  } catch (const nlohmann::json::exception& e) {
    return {false, "worker_failed", fmt::format("the worker wrote a malformed result: {}", e.what()), {}};
  }
  out.ok = outcome.ok();
  if (out.ok) return out;
  out.reason = outcome.describe();
  switch (outcome.status) {
    case JobOutcome::Status::kCrashed: out.failure_class = "crashed"; break;
    case JobOutcome::Status::kTimedOut: out.failure_class = "timed_out"; break;
    case JobOutcome::Status::kCancelled: out.failure_class = "worker_failed"; break;
    default:  // failed: in the job's own words (by its stage), or the worker's
      out.failure_class = outcome.result.is_object() ? failure_class_of(out.result.stage, out.result.error) : "worker_failed";
  }
  return out;
}

// Runs one model on one rung for one round in a child process.
class Runner {
 public:
  // "det" for a model of one form, "det:i8" for one of several.
  std::string shown_name(const BenchModel& model) const {
    const auto forms = std::count_if(o_.models.begin(), o_.models.end(), [&](const BenchModel& m) { return m.name == model.name; });
    return forms > 1 ? model.name + ":" + model.form : model.name;
  }

  Runner(const BenchOptions& o, const RuntimeBuild& build, fs::path worker, fs::path work)
      : o_(o), build_(build), jobs_(std::move(worker)), work_(std::move(work)) {}

  fs::path round_dir(const BenchModel& model, const RungSpec& rung, int round) const {
    return work_ / sanitize(model.name + "." + model.form) / sanitize(rung.name) / fmt::format("round{}", round);
  }

  ChildRun run(const BenchModel& model, const RungSpec& rung, bool fp16, int round, const InputSpec& spec) {
    // A rung that cannot run here is not started: its row gives the standing's sentence (rung/standing.h).
    if (std::string why = rung_blocked_reason(rung, build_); !why.empty()) return {false, "provider_unavailable", why, {}};
    const fs::path dir = round_dir(model, rung, round);
    std::error_code ec;
    fs::remove_all(dir, ec);
    create_directories_unless_ending(dir, ec);
    const BenchJob job = job_for(model, rung, fp16, round, spec, dir);
    // Progress: the child rewrites its runs-done count; the runner's wait reads it.
    std::function<void()> on_wait;
    if (o_.on_progress) {
      o_.on_progress(shown_name(model), rung.display, round, 0, job.runs);
      on_wait = [&] {
        int done = 0, total = job.runs;
        std::istringstream in(read_input_file_if_usable(job.progress_file, FileKind::kText).value_or(""));
        if (in >> done >> total && done > 0) o_.on_progress(shown_name(model), rung.display, round, done, total);
      };
    }
    return judged(jobs_.run({"bench", job, o_.deadline, dir, on_wait, nullptr, o_.worker_memory_limit_mb}));
  }

 private:
  BenchJob job_for(const BenchModel& model, const RungSpec& rung, bool fp16, int round, const InputSpec& spec, const fs::path& dir) const {
    BenchJob job;
    job.target.runtime_library = build_.library;
    job.target.allow_writable_runtime = o_.runtimes.allow_writable_by_others;
    job.target.model = model.path;
    job.target.rung = rung;
    job.target.threads = o_.threads;
    job.model_name = model.name;
    job.inputs = spec;
    job.zero_inputs = o_.zero_inputs;
    job.fp16 = fp16;
    job.warmup = o_.warmup;
    job.runs = o_.duration_s > 0 ? 0 : o_.runs;
    job.duration_s = o_.duration_s;
    job.seed = o_.seed;
    job.outputs_dir = dir / "outputs";
    job.engine_dir = work_ / sanitize(model.name + "." + model.form) / sanitize(rung.name) / "engine";
    job.cold = round == 0;
    job.profile = round == 0;
    job.compare_bare = o_.compare_bare && rung.append == AppendMethod::kNone;
    job.progress_file = dir / "progress";
    return job;
  }

  const BenchOptions& o_;
  const RuntimeBuild& build_;
  JobRunner jobs_;
  fs::path work_;
};

std::vector<Tensor> read_outputs(const fs::path& dir) {
  auto r = read_tensor_directory(dir);
  return r ? std::move(*r) : std::vector<Tensor>{};
}

LatencySummary to_latency(const std::vector<double>& runs) {
  auto s = summarize(runs);
  LatencySummary l;
  l.count = s.count;
  l.min = s.min;
  l.p50 = s.p50;
  l.p90 = s.p90;
  l.p99 = s.p99;
  l.max = s.max;
  l.mean = s.mean;
  l.stddev = s.stddev;
  l.cv = s.cv;
  return l;
}

// The rungs asked for, CPU first: it is the reference every other row is compared with.
Result<std::vector<RungSpec>> select_rungs(const std::vector<RungSpec>& ladder, const std::vector<std::string>& names) {
  std::vector<RungSpec> out;
  const RungSpec& cpu = ladder.back();
  out.push_back(cpu);
  if (names.empty()) {
    for (std::size_t i = 0; i + 1 < ladder.size(); ++i) out.push_back(ladder[i]);
    return out;
  }
  for (const auto& n : names) {
    // Named by id or display name, in any case ("TensorRT", "tensorrt", "qnn htp").
    auto it = std::find_if(ladder.begin(), ladder.end(), [&](const RungSpec& r) { return same_rung_name(r.name, n) || same_rung_name(r.display, n); });
    if (it == ladder.end()) {
      std::vector<std::string> have;
      for (const auto& r : ladder) have.push_back(r.name);
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("no rung '{}' on this device; its ladder with this runtime build is: {}", n, fmt::join(have, ", "))};
    }
    if (std::none_of(out.begin(), out.end(), [&](const RungSpec& r) { return r.name == it->name; })) out.push_back(*it);
  }
  return out;
}

Status check_options(const BenchOptions& o) {
  if (o.models.empty()) return Error{ErrorCode::kInvalidArgument, "no model to bench"};
  if (o.duration_s <= 0 && o.runs < 1) return Error{ErrorCode::kInvalidArgument, fmt::format("--runs must be at least 1, not {}", o.runs)};
  if (!(std::isfinite(o.duration_s) && o.duration_s >= 0)) return Error{ErrorCode::kInvalidArgument, "--duration must be a finite number of seconds"};
  RUNG_RETURN_IF_ERROR(check_deadline(o.deadline, "--deadline"));
  if (o.warmup < 0) return Error{ErrorCode::kInvalidArgument, fmt::format("--warmup must be 0 or more, not {}", o.warmup)};
  if (o.rounds < 1) return Error{ErrorCode::kInvalidArgument, fmt::format("--rounds must be at least 1, not {}", o.rounds)};
  RUNG_RETURN_IF_ERROR(check_thread_count(o.threads, "--threads"));
  if (!o.input_dir.empty()) {
    RUNG_RETURN_IF_ERROR(check_input_directory(o.input_dir));
  }
  return {};
}

// Every model is checked before anything is measured: bad input costs nothing.
Result<std::vector<ModelFileFacts>> inspect_models(const std::vector<BenchModel>& models) {
  std::vector<ModelFileFacts> facts;
  for (const auto& m : models) {
    auto f = inspect_model_file(m.path);
    if (!f) return Error{f.error().code == ErrorCode::kNotFound ? ErrorCode::kNotFound : ErrorCode::kInvalidArgument,
                         fmt::format("model {}: {}", m.name, f.error().message)};
    facts.push_back(*f);
  }
  return facts;
}

// The build, the rungs to measure and the worker: what the walk needs besides the models.
struct BenchSetting {
  Hardware hw;
  RuntimeDiscovery discovery;
  const RuntimeBuild* build = nullptr;
  std::vector<RungSpec> rungs;
  fs::path worker;
};

Result<BenchSetting> find_setting(const BenchOptions& o) {
  BenchSetting s;
  s.hw = detect_hardware(o.hardware_root);
  auto discovery = discover_runtimes(o.runtimes, s.hw);
  if (!discovery) {
    // A bad search directory is the caller's (kInvalidArgument); finding no usable build is kNoRuntime.
    return discovery.error();
  }
  s.discovery = std::move(*discovery);
  s.build = s.discovery.chosen_build();
  auto ladder = effective_ladder(s.hw, *s.build, o.plugin_dirs, o.runtimes.allow_writable_plugins);
  if (!ladder) return ladder.error();
  auto rungs = select_rungs(*ladder, o.rungs);
  if (!rungs) return rungs.error();
  s.rungs = std::move(*rungs);
  s.worker = find_worker(o.worker, o.runtimes.read_environment);
  if (s.worker.empty()) {
    return Error{ErrorCode::kNotFound, "no rung-probe-worker found (RUNG_PROBE_WORKER, beside rung, or libexec): bench measures each rung in its own process"};
  }
  return s;
}

void describe_machine(const BenchSetting& s, BenchReport& report) {
  report.date = utc_now();
  report.hostname = host_name();
  report.os = os_line();
  report.cpu = s.hw.cpu.model.empty() ? "unknown" : s.hw.cpu.model;
  report.logical_cpus = s.hw.cpu.logical_cpus;
  report.hardware_identity = s.hw.identity();
  report.runtime_version = s.build->version;
  report.runtime_library = s.build->library;
  report.api_version = s.build->api_version;
}

// Round r starts r places further along, so no rung always runs first (or last).
// Round 0 runs every model's CPU first: a model the floor cannot run is bad
// input, and is said before minutes go into the other rungs.
std::vector<std::pair<std::size_t, std::size_t>> round_order(std::size_t models, std::size_t rungs, int round) {
  std::vector<std::pair<std::size_t, std::size_t>> order;  // (model, rung)
  for (std::size_t m = 0; m < models && round == 0; ++m) order.emplace_back(m, 0);
  for (std::size_t m = 0; m < models; ++m) {
    for (std::size_t k = round == 0 ? 1 : 0; k < rungs; ++k) order.emplace_back(m, (k + static_cast<std::size_t>(round)) % rungs);
  }
  return order;
}

// One round's run, added to the cell's figures.
void add_run(Cell& cell, const BenchJobResult& r, int round, const fs::path& outputs) {
  if (!cell.have_first) {
    cell.have_first = true;
    cell.first_run_ms = r.first_run_ms;
    cell.build_cold_ms = r.build_cold_ms;
    cell.provider_version = r.provider_version;
    cell.evidence = r.evidence;
    cell.placement = r.placement;
  }
  if (r.build_cached_ms) cell.cached_builds.push_back(*r.build_cached_ms);
  cell.runs.insert(cell.runs.end(), r.run_ms.begin(), r.run_ms.end());
  cell.round_runs[round] = r.run_ms;
  cell.bare_runs.insert(cell.bare_runs.end(), r.bare_run_ms.begin(), r.bare_run_ms.end());
  cell.round_p50[round] = median(r.run_ms);
  cell.round_outputs[round] = outputs;
  cell.peak_rss_kb = std::max(cell.peak_rss_kb, r.peak_rss_kb);
}

// What the rounds gathered: per model, one cell per rung (the CPU first).
struct Measured {
  std::vector<std::vector<Cell>> cells;
  std::vector<std::string> inputs_described;
};

// Every round, every model, every rung (a rung that failed once is not run again).
Result<Measured> measure(const BenchOptions& o, const std::vector<ModelFileFacts>& facts, const std::vector<RungSpec>& rungs,
                         Runner& runner) {
  const std::size_t n = rungs.size();
  Measured got{std::vector<std::vector<Cell>>(o.models.size(), std::vector<Cell>(n)), std::vector<std::string>(o.models.size())};
  for (std::size_t m = 0; m < o.models.size(); ++m) {
    for (std::size_t i = 0; i < n; ++i) got.cells[m][i].rung = &rungs[i];
  }
  for (int round = 0; round < o.rounds; ++round) {
    for (const auto& [m, i] : round_order(o.models.size(), n, round)) {
      const BenchModel& model = o.models[m];
      Cell& cell = got.cells[m][i];
      if (cell.failed) continue;  // it failed once; its reason stands, and a hang is not waited for twice
      InputSpec spec = model.inputs;
      if (!o.input_dir.empty()) spec.tensors_dir = o.input_dir;
      const RungSpec& rung = *cell.rung;
      const bool fp16 = facts[m].form == NumericForm::kF32 && builds_fp16(rung, Role::kGeneric);
      auto run = runner.run(model, rung, fp16, round, spec);
      if (i == 0 && !run.ok) {
        // The CPU is the floor and the reference: a model it cannot run is the caller's input problem.
        std::string fed = run.result.inputs_described.empty() ? "" : fmt::format(" (inputs fed: {})", run.result.inputs_described);
        return Error{ErrorCode::kInvalidArgument, fmt::format("model {}: the CPU rung cannot run it: {}{}", runner.shown_name(model), run.reason, fed)};
      }
      if (!run.ok) {
        cell.failed = true;
        cell.failure_class = run.failure_class;
        cell.failure_reason = run.reason;
        continue;
      }
      if (got.inputs_described[m].empty()) got.inputs_described[m] = run.result.inputs_described;
      add_run(cell, run.result, round, runner.round_dir(model, rung, round) / "outputs");
    }
  }
  return got;
}

// Output match: every round's outputs against the CPU's first.
void compare_with_reference(const std::vector<Tensor>& reference, const Cell& c, bool is_floor, BenchRow& row) {
  row.match = is_floor ? OutputMatch::kReference : OutputMatch::kMatch;
  for (const auto& [round, dir] : c.round_outputs) {
    if (is_floor && round == 0) continue;
    auto cmp = compare_outputs(reference, read_outputs(dir), row.tolerance);
    for (const auto& t : cmp.outputs) {
      row.max_abs_diff = std::max(row.max_abs_diff, t.max_abs);
      row.max_rel_diff = std::max(row.max_rel_diff, t.max_rel);
    }
    if (!cmp.faithful() && row.match != OutputMatch::kMismatch) {
      row.match = OutputMatch::kMismatch;
      row.match_detail = is_floor ? fmt::format("round {} of the CPU differs from round 1: {}", round + 1, cmp.first_problem())
                                  : cmp.first_problem();
    }
  }
  if (row.match == OutputMatch::kReference) row.match_detail = "the reference: other rows are compared with this one";
}

// Run k of `c` over run k of `against` in each round both ran: the speed rule's
// median and sign-test interval of those ratios (core/speed_rule.h).
std::optional<PairedRatio> paired_ratio(const Cell& c, const Cell& against) {
  if (c.failed || against.failed) return std::nullopt;
  std::vector<double> ratios;
  for (const auto& [round, runs] : c.round_runs) {
    auto f = against.round_runs.find(round);
    if (f == against.round_runs.end()) continue;
    const std::size_t n = std::min(runs.size(), f->second.size());
    for (std::size_t k = 0; k < n; ++k) {
      if (f->second[k] > 0) ratios.push_back(runs[k] / f->second[k]);
    }
  }
  if (ratios.empty()) return std::nullopt;
  const SpeedJudgement j = judge_speed(ratios, SpeedRule{});
  return PairedRatio{j.ratio, j.low, j.high, j.pairs};
}

// Every run, or `most` of them evenly spaced in run order (a long --duration run
// keeps its shape across the whole time, not only its start).
std::vector<double> kept_runs(const std::vector<double>& runs, std::size_t most) {
  if (runs.size() <= most) return runs;
  std::vector<double> out;
  out.reserve(most);
  for (std::size_t k = 0; k < most; ++k) out.push_back(runs[k * runs.size() / most]);
  return out;
}

// The figures of a row that ran: latency, throughput, memory, ratios paired within a round.
void fill_figures(const Cell& c, const Cell& floor, BenchRow& row) {
  row.build_cold_ms = c.build_cold_ms;
  if (!c.cached_builds.empty()) row.build_cached_ms = median(c.cached_builds);
  row.first_run_ms = c.first_run_ms;
  row.latency = to_latency(c.runs);
  row.run_ms = kept_runs(c.runs, BenchRow::kMaxKeptRuns);
  for (const auto& [round, p50] : c.round_p50) row.round_p50_ms.push_back(p50);
  double total_ms = 0;
  for (double x : c.runs) total_ms += x;
  row.throughput_per_s = total_ms > 0 ? 1000.0 * static_cast<double>(c.runs.size()) / total_ms : 0;
  row.peak_rss_mb = c.peak_rss_kb / 1024.0;
  row.evidence = c.evidence;
  // Ratios are paired within a round: both sides ran minutes apart at most, on the same machine state.
  row.x_floor = paired_ratio(c, floor);
  if (row.x_floor) row.ratio_to_floor = row.x_floor->ratio;
  if (!c.bare_runs.empty()) row.bare_p50_ms = median(c.bare_runs);
}

// What a reader must not miss about a row: a provider that ran nothing, noisy figures, overhead against the bare loop.
void warn_about(const Cell& c, bool is_floor, const std::string& model, const std::string& shown_rung, BenchRow& row,
                std::vector<std::string>& warnings) {
  // Which provider ran the nodes: a rung that ran none is the CPU with extra steps.
  if (c.placement.known) {
    row.placement = BenchRow::Placement{c.placement.rung_nodes(is_floor), c.placement.total_nodes(), c.placement.rung_time_share(is_floor),
                                        c.placement.describe()};
  }
  if (!is_floor && c.placement.known && c.placement.total_nodes() > 0) {
    if (c.placement.accelerated_nodes() == 0) {
      row.evidence.push_back("every node ran on CPUExecutionProvider: this row measures the CPU");
      warnings.push_back(fmt::format("{} on {}: the provider ran no node; its figures are the CPU's", shown_rung, model));
    }
  }
  if (row.high_variation()) {
    warnings.push_back(fmt::format("{} on {}: coefficient of variation {:.1f}% (above {:.0f}%): the figures are noisy; "
                                   "close other work or raise --runs",
                                   shown_rung, model, row.latency.cv * 100, kHighVariation * 100));
  }
  if (row.bare_p50_ms && *row.bare_p50_ms > 0) {
    double ratio = row.latency.p50 / *row.bare_p50_ms;
    row.evidence.push_back(fmt::format("bare OrtApi::Run loop in the same process, interleaved: p50 {:.4f} ms; rung's p50 / bare p50 = {:.4f}",
                                       *row.bare_p50_ms, ratio));
    if (std::abs(ratio - 1) > 0.03) {
      warnings.push_back(fmt::format("{} on {}: rung's p50 is {:.1f}% off the bare C API loop's (target: within 3%)", shown_rung,
                                     model, (ratio - 1) * 100));
    }
  }
}

BenchRow make_row(const BenchOptions& o, const BenchModel& model, const ModelFileFacts& facts, const Cell& c, const Cell& floor,
                  const std::vector<Tensor>& reference, bool several_forms, std::vector<std::string>& warnings) {
  const RungSpec& rung = *c.rung;
  const bool is_floor = &c == &floor;
  BenchRow row;
  row.model_form = model.form;
  row.rung = rung.name;
  row.display = rung.display;
  row.provider = rung.provider;
  row.provider_version = c.provider_version;
  const bool fp16_engine = facts.form == NumericForm::kF32 && builds_fp16(rung, Role::kGeneric);
  const NumericForm form = fp16_engine ? NumericForm::kF16 : facts.form;
  row.form = numeric_form_name(form);
  row.model_id = model_id(model.name, form);
  row.ok = !c.failed;
  if (c.failed) {
    row.failure_class = c.failure_class;
    row.failure_reason = c.failure_reason;
    row.match_detail = "the rung did not run";
    row.tolerance = o.tolerance;
    return row;
  }
  fill_figures(c, floor, row);
  // An fp16 engine is held to the fp16 tolerance: its model id already says it computes in f16.
  row.tolerance = Tolerance::for_forms(facts.form, form, o.tolerance);
  compare_with_reference(reference, c, is_floor, row);
  warn_about(c, is_floor, model.name, several_forms ? fmt::format("{} ({})", rung.display, model.form) : rung.display, row, warnings);
  return row;
}

BenchFormReport form_report(const BenchModel& model, const ModelFileFacts& facts, const std::string& inputs_described) {
  BenchFormReport f;
  f.label = model.form;
  f.path = fs::absolute(model.path);
  f.sha256 = facts.sha256;
  f.stable_sha256 = facts.stable_sha256;
  f.size_bytes = facts.size_bytes;
  f.form = numeric_form_name(facts.form);
  f.form_evidence = facts.form_evidence;
  f.model_id = model_id(model.name, facts.form);
  f.opset = facts.opset;
  f.nodes = facts.nodes;
  f.inputs_described = inputs_described;
  return f;
}

// The f32 form of a model's entries (`members`): the one labelled f32, else the
// only file in the f32 numeric form; none otherwise.
std::optional<std::size_t> f32_member(const BenchOptions& o, const std::vector<ModelFileFacts>& facts, const std::vector<std::size_t>& members) {
  for (std::size_t e : members) {
    if (o.models[e].form == "f32") return e;
  }
  std::optional<std::size_t> found;
  for (std::size_t e : members) {
    if (facts[e].form != NumericForm::kF32) continue;
    if (found) return std::nullopt;
    found = e;
  }
  return found;
}

// One model: every form (entry) of it, the f32 form first, each form's rungs.
BenchModelReport model_report(const BenchOptions& o, const std::vector<std::size_t>& members_given, const std::vector<ModelFileFacts>& facts,
                              const Measured& got, std::vector<std::string>& warnings) {
  const auto f32 = f32_member(o, facts, members_given);
  std::vector<std::size_t> members = members_given;
  if (f32) std::stable_partition(members.begin(), members.end(), [&](std::size_t e) { return e == *f32; });
  BenchModelReport mr;
  for (std::size_t e : members) mr.forms.push_back(form_report(o.models[e], facts[e], got.inputs_described[e]));
  const BenchFormReport& first = mr.forms.front();
  mr.name = o.models[members.front()].name;
  mr.path = first.path;
  mr.sha256 = first.sha256;
  mr.stable_sha256 = first.stable_sha256;
  mr.size_bytes = first.size_bytes;
  mr.form = first.form;
  mr.form_evidence = first.form_evidence;
  mr.model_id = first.model_id;
  mr.opset = first.opset;
  mr.nodes = first.nodes;
  mr.inputs_described = first.inputs_described;
  for (std::size_t e : members) {
    const Cell& floor = got.cells[e][0];
    const auto reference = read_outputs(floor.round_outputs.at(0));
    for (std::size_t i = 0; i < got.cells[e].size(); ++i) {
      const Cell& c = got.cells[e][i];
      BenchRow row = make_row(o, o.models[e], facts[e], c, floor, reference, members.size() > 1, warnings);
      if (f32 && row.ok) row.x_f32 = paired_ratio(c, got.cells[*f32][i]);
      mr.rows.push_back(std::move(row));
    }
  }
  return mr;
}

// Each entry's form label (its own, else its file's numeric form), checked
// unique within its model; then the --shape options applied to every entry.
Status label_forms(BenchOptions& o, const std::vector<ModelFileFacts>& facts) {
  for (std::size_t e = 0; e < o.models.size(); ++e) {
    BenchModel& m = o.models[e];
    if (m.form.empty()) m.form = numeric_form_name(facts[e].form);
    for (std::size_t k = 0; k < e; ++k) {
      if (o.models[k].name == m.name && o.models[k].form == m.form) {
        return Error{ErrorCode::kInvalidArgument,
                     fmt::format("model {}: {} and {} are both its '{}' form; give each form its own label as NAME:FORM=PATH "
                                 "(e.g. {}:{}b={})",
                                 m.name, o.models[k].path.string(), m.path.string(), m.form, m.name, m.form, m.path.string())};
      }
    }
  }
  return {};
}

std::size_t element_bytes(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: return 8;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: return 2;
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: return 1;
    default: return 4;
  }
}

// The graph's inputs as the file declares them (initializers excluded).
Result<std::vector<DeclaredInput>> declared_inputs(const fs::path& file) {
  auto model = read_onnx_model(file);
  if (!model) return model.error();
  std::set<std::string> initializers;
  for (const auto& t : model->graph().initializer()) initializers.insert(t.name());
  std::vector<DeclaredInput> out;
  for (const auto& in : model->graph().input()) {
    if (initializers.count(in.name())) continue;
    DeclaredInput d;
    d.name = in.name();
    if (in.type().has_tensor_type()) {
      const auto& t = in.type().tensor_type();
      d.element_bytes = element_bytes(t.elem_type());
      for (const auto& dim : t.shape().dim()) d.shape.push_back(dim.has_dim_value() && dim.dim_value() > 0 ? dim.dim_value() : -1);
    }
    out.push_back(std::move(d));
  }
  return out;
}

Status apply_shapes(BenchOptions& o) {
  if (o.shapes.empty()) return {};
  std::vector<std::vector<DeclaredInput>> inputs;
  for (const auto& m : o.models) {
    auto d = declared_inputs(m.path);
    if (!d) return Error{ErrorCode::kInvalidArgument, fmt::format("model {}: {}", m.name, d.error().message)};
    inputs.push_back(std::move(*d));
  }
  for (const auto& shape : o.shapes) {
    bool applied = false;
    for (std::size_t e = 0; e < o.models.size(); ++e) {
      const bool has = std::any_of(inputs[e].begin(), inputs[e].end(), [&](const DeclaredInput& d) { return d.name == shape.input; });
      if (!has) continue;
      if (auto s = apply_input_shape(o.models[e].inputs, shape, inputs[e]); !s) {
        return Error{ErrorCode::kInvalidArgument, o.models.size() > 1 ? fmt::format("model {}: {}", o.models[e].name, s.error().message) : s.error().message};
      }
      applied = true;
    }
    if (!applied) return apply_input_shape(o.models.front().inputs, shape, inputs.front());  // names the input and the model's inputs
  }
  return {};
}

}  // namespace

Result<BenchReport> run_bench(const BenchOptions& given) {
  RUNG_RETURN_IF_ERROR(check_options(given));
  BenchOptions o = given;
  BenchReport report;
  report.settings = o;
  report.settings.on_progress = nullptr;
  report.inputs_mode = !o.input_dir.empty() ? "recorded: " + o.input_dir.string() : o.zero_inputs ? "zeros" : "random";
  auto facts = inspect_models(o.models);
  if (!facts) return facts.error();
  RUNG_RETURN_IF_ERROR(label_forms(o, *facts));
  RUNG_RETURN_IF_ERROR(apply_shapes(o));
  report.settings.models = o.models;
  auto setting = find_setting(o);
  if (!setting) return setting.error();
  describe_machine(*setting, report);

  auto work = WorkDir::create("rung-bench");
  if (!work) return work.error();
  Runner runner(o, *setting->build, setting->worker, work->path());
  auto measured = measure(o, *facts, setting->rungs, runner);
  if (!measured) return measured.error();
  // Entries of one name are forms of one model, shown once, in the order their names first came.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t e = 0; e < o.models.size(); ++e) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& members) { return o.models[members.front()].name == o.models[e].name; });
    if (g == groups.end()) groups.push_back({e});
    else g->push_back(e);
  }
  for (const auto& members : groups) report.models.push_back(model_report(o, members, *facts, *measured, report.warnings));
  return report;
}

}  // namespace rung
