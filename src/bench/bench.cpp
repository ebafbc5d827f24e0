// The bench's walk: check every input first, then for each round, each model,
// each rung (the order rotated by the round) one child process; then the
// figures, paired ratios and output comparisons.
#include "rung/bench.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/forms.h"
#include "core/sample_stats.h"
#include "graph/model_file.h"
#include "jobs/benchmark.h"
#include "os/atomic_file.h"
#include "os/child_process.h"
#include "os/read_file.h"
#include "os/temp_dir.h"
#include "os/worker_location.h"
#include "runtime/plugin_rungs.h"
#include "session/tensor_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  auto p = text.rfind('\n');
  return p == std::string::npos ? text : text.substr(p + 1);
}

std::string sanitize(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return out;
}

std::string os_line() {
  utsname u{};
  if (::uname(&u) != 0) return "unknown";
  return fmt::format("{} {} {}", u.sysname, u.release, u.machine);
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// A child that ended badly, by how it ended: the classes a record carries.
std::string failure_class_of(const std::string& stage, const std::string& error) {
  if (stage == "build") {
    // A provider whose library is absent never got to try.
    if (error.find(".so not found") != std::string::npos) return "provider_unavailable";
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
  std::map<int, double> round_p50;
  std::map<int, fs::path> round_outputs;
  std::optional<double> build_cold_ms;
  double first_run_ms = 0;
  double peak_rss_kb = 0;
  std::string provider_version;
  std::vector<std::string> evidence;
  std::vector<std::pair<std::string, int>> nodes;
  bool have_first = false;
};

struct ChildRun {
  bool ok = false;
  std::string failure_class, reason, stage;
  BenchJobResult result;
};

class Runner {
 public:
  Runner(const BenchOptions& o, const RuntimeBuild& build, fs::path worker, fs::path work)
      : o_(o), build_(build), worker_(std::move(worker)), work_(std::move(work)) {}

  ChildRun run(const BenchModel& model, const RungSpec& rung, bool fp16, int round, const InputSpec& spec) {
    fs::path dir = work_ / sanitize(model.name) / sanitize(rung.name) / fmt::format("round{}", round);
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    BenchJob job;
    job.runtime_library = build_.library;
    job.allow_writable_runtime = o_.runtimes.allow_writable_by_others;
    job.model_name = model.name;
    job.model = model.path;
    job.inputs = spec;
    job.zero_inputs = o_.zero_inputs;
    job.rung = rung;
    job.fp16 = fp16;
    job.threads = o_.threads;
    job.warmup = o_.warmup;
    job.runs = o_.duration_s > 0 ? 0 : o_.runs;
    job.duration_s = o_.duration_s;
    job.seed = o_.seed;
    job.outputs_dir = dir / "outputs";
    job.engine_dir = work_ / sanitize(model.name) / sanitize(rung.name) / "engine";
    job.cold = round == 0;
    job.profile = round == 0;
    job.compare_bare = o_.compare_bare && rung.append == AppendMethod::kNone;
    job.progress_file = dir / "progress";

    ChildRun out;
    if (auto s = write_file_atomically(dir / "job.json", bench_job_to_json(job)); !s) {
      out.failure_class = "worker_failed";
      out.reason = s.error().message;
      return out;
    }
    ChildOutcome child;
    {
      // Progress: the child rewrites its runs-done count; read it while waiting.
      std::mutex m;
      std::condition_variable cv;
      bool finished = false;
      std::thread watcher;
      if (o_.on_progress) {
        o_.on_progress(model.name, rung.display, round, 0, job.runs);  // before the watcher: never two calls at once
        watcher = std::thread([&] {
          std::unique_lock lock(m);
          while (!cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return finished; })) {
            int done = 0, total = job.runs;
            std::istringstream in(read_text_file(job.progress_file));
            if (in >> done >> total && done > 0) o_.on_progress(model.name, rung.display, round, done, total);
          }
        });
      }
      child = run_child(worker_, {"bench", (dir / "job.json").string()}, dir / "worker.log", o_.deadline);
      {
        std::lock_guard lock(m);
        finished = true;
      }
      cv.notify_all();
      if (watcher.joinable()) watcher.join();
    }
    if (!child.started) {
      out.failure_class = "worker_failed";
      out.reason = fmt::format("could not start {}: {}", worker_.string(), child.start_error);
      return out;
    }
    if (child.timed_out) {
      out.failure_class = "timed_out";
      out.reason = fmt::format("no answer within {:.0f} s; killed", std::chrono::duration<double>(o_.deadline).count());
      return out;
    }
    if (child.signal != 0) {
      out.failure_class = "crashed";
      out.reason = fmt::format("the worker died of {}", child.signal_name());
      std::string log = last_line(read_text_file(dir / "worker.log"));
      if (!log.empty()) out.reason += ": " + log;
      return out;
    }
    auto parsed = bench_result_from_json(read_text_file(dir / "result.json"));
    if (!parsed) {
      out.failure_class = "worker_failed";
      out.reason = fmt::format("worker exited with code {} and no result: {}", child.exit_code, last_line(read_text_file(dir / "worker.log")));
      return out;
    }
    out.result = std::move(*parsed);
    out.ok = out.result.ok;
    out.stage = out.result.stage;
    if (!out.ok) {
      out.failure_class = failure_class_of(out.result.stage, out.result.error);
      out.reason = out.result.error;
    }
    return out;
  }

 private:
  const BenchOptions& o_;
  const RuntimeBuild& build_;
  fs::path worker_;
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
    auto it = std::find_if(ladder.begin(), ladder.end(), [&](const RungSpec& r) { return r.name == n; });
    if (it == ladder.end()) {
      std::vector<std::string> have;
      for (const auto& r : ladder) have.push_back(r.name);
      return Error{ErrorCode::kInvalidArgument,
                   fmt::format("no rung '{}' on this device; its ladder with this runtime build is: {}", n, fmt::join(have, ", "))};
    }
    if (std::none_of(out.begin(), out.end(), [&](const RungSpec& r) { return r.name == n; })) out.push_back(*it);
  }
  return out;
}

}  // namespace

const char* output_match_name(OutputMatch m) {
  switch (m) {
    case OutputMatch::kReference: return "reference";
    case OutputMatch::kMatch: return "match";
    case OutputMatch::kMismatch: return "mismatch";
    case OutputMatch::kNotCompared: return "not compared";
  }
  return "?";
}

Result<BenchReport> run_bench(const BenchOptions& o) {
  if (o.models.empty()) return Error{ErrorCode::kInvalidArgument, "no model to bench"};
  if (o.duration_s <= 0 && o.runs < 1) return Error{ErrorCode::kInvalidArgument, fmt::format("--runs must be at least 1, not {}", o.runs)};
  if (o.duration_s < 0) return Error{ErrorCode::kInvalidArgument, "--duration must be positive"};
  if (o.warmup < 0) return Error{ErrorCode::kInvalidArgument, fmt::format("--warmup must be 0 or more, not {}", o.warmup)};
  if (o.rounds < 1) return Error{ErrorCode::kInvalidArgument, fmt::format("--rounds must be at least 1, not {}", o.rounds)};
  if (o.threads < 0) return Error{ErrorCode::kInvalidArgument, fmt::format("--threads must be 0 or more, not {}", o.threads)};
  if (!o.input_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(o.input_dir, ec)) {
      return Error{ErrorCode::kNotFound, fmt::format("input directory {} does not exist", o.input_dir.string())};
    }
  }

  BenchReport report;
  report.settings = o;
  report.settings.on_progress = nullptr;
  report.inputs_mode = !o.input_dir.empty() ? "recorded: " + o.input_dir.string() : o.zero_inputs ? "zeros" : "random";

  // Every model is checked before anything is measured: bad input costs nothing.
  std::vector<ModelFileFacts> facts;
  for (const auto& m : o.models) {
    auto f = inspect_model_file(m.path);
    if (!f) return Error{f.error().code == ErrorCode::kNotFound ? ErrorCode::kNotFound : ErrorCode::kInvalidArgument,
                         fmt::format("model {}: {}", m.name, f.error().message)};
    facts.push_back(*f);
  }

  Hardware hw = detect_hardware(o.hardware_root);
  auto discovery = discover_runtimes(o.runtimes, hw);
  if (!discovery) {
    // A bad search directory is the caller's; finding no usable build is said as kLoadFailed.
    if (discovery.error().code == ErrorCode::kInvalidArgument) return discovery.error();
    return Error{ErrorCode::kLoadFailed, discovery.error().message};
  }
  const RuntimeBuild& build = *discovery->chosen_build();
  auto rungs = select_rungs(effective_ladder(hw, build, o.plugin_dirs), o.rungs);
  if (!rungs) return rungs.error();
  fs::path worker = find_worker(o.worker);
  if (worker.empty()) {
    return Error{ErrorCode::kNotFound, "no rung-probe-worker found (RUNG_PROBE_WORKER, beside rung, or libexec): bench measures each rung in its own process"};
  }

  report.date = utc_now();
  report.hostname = host_name();
  report.os = os_line();
  report.cpu = hw.cpu.model.empty() ? "unknown" : hw.cpu.model;
  report.logical_cpus = hw.cpu.logical_cpus;
  report.hardware_identity = hw.identity();
  report.runtime_version = build.version;
  report.runtime_library = build.library;
  report.api_version = build.api_version;

  auto work_dir = TempDir::create("rung-bench");
  if (!work_dir) return work_dir.error();
  const fs::path work = work_dir->path();
  Runner runner(o, build, worker, work);

  const std::size_t n = rungs->size();
  std::vector<std::vector<Cell>> cells(o.models.size(), std::vector<Cell>(n));
  std::vector<std::string> inputs_described(o.models.size());
  for (std::size_t m = 0; m < o.models.size(); ++m) {
    for (std::size_t i = 0; i < n; ++i) cells[m][i].rung = &(*rungs)[i];
  }

  for (int round = 0; round < o.rounds; ++round) {
    // Round r starts r places further along, so no rung always runs first (or last).
    // Round 0 runs every model's CPU first: a model the floor cannot run is bad
    // input, and is said before minutes go into the other rungs.
    std::vector<std::pair<std::size_t, std::size_t>> order;  // (model, rung)
    for (std::size_t m = 0; m < o.models.size() && round == 0; ++m) order.emplace_back(m, 0);
    for (std::size_t m = 0; m < o.models.size(); ++m) {
      for (std::size_t k = round == 0 ? 1 : 0; k < n; ++k) order.emplace_back(m, (k + static_cast<std::size_t>(round)) % n);
    }
    for (const auto& [m, i] : order) {
      const BenchModel& model = o.models[m];
      InputSpec spec = model.inputs;
      if (!o.input_dir.empty()) spec.tensors_dir = o.input_dir;
      {
        Cell& cell = cells[m][i];
        if (cell.failed) continue;  // it failed once; its reason stands, and a hang is not waited for twice
        const RungSpec& rung = *cell.rung;
        const bool fp16 = facts[m].form == NumericForm::kF32 && builds_fp16(rung, Role::kGeneric);
        auto run = runner.run(model, rung, fp16, round, spec);
        if (i == 0 && !run.ok) {
          // The CPU is the floor and the reference: a model it cannot run is the caller's input problem.
          std::string fed = run.result.inputs_described.empty() ? "" : fmt::format(" (inputs fed: {})", run.result.inputs_described);
          return Error{ErrorCode::kInvalidArgument, fmt::format("model {}: the CPU rung cannot run it: {}{}", model.name,
                                                                run.reason, fed)};
        }
        if (!run.ok) {
          cell.failed = true;
          cell.failure_class = run.failure_class;
          cell.failure_reason = run.reason;
          continue;
        }
        const BenchJobResult& r = run.result;
        if (inputs_described[m].empty()) inputs_described[m] = r.inputs_described;
        if (!cell.have_first) {
          cell.have_first = true;
          cell.first_run_ms = r.first_run_ms;
          cell.build_cold_ms = r.build_cold_ms;
          cell.provider_version = r.provider_version;
          cell.evidence = r.evidence;
          cell.nodes = r.nodes_by_provider;
        }
        if (r.build_cached_ms) cell.cached_builds.push_back(*r.build_cached_ms);
        cell.runs.insert(cell.runs.end(), r.run_ms.begin(), r.run_ms.end());
        cell.bare_runs.insert(cell.bare_runs.end(), r.bare_run_ms.begin(), r.bare_run_ms.end());
        cell.round_p50[round] = median(r.run_ms);
        cell.round_outputs[round] = work / sanitize(model.name) / sanitize(rung.name) / fmt::format("round{}", round) / "outputs";
        cell.peak_rss_kb = std::max(cell.peak_rss_kb, r.peak_rss_kb);
      }
    }
  }

  for (std::size_t m = 0; m < o.models.size(); ++m) {
    const BenchModel& model = o.models[m];
    BenchModelReport mr;
    mr.name = model.name;
    mr.path = fs::absolute(model.path);
    mr.sha256 = facts[m].sha256;
    mr.size_bytes = facts[m].size_bytes;
    mr.form = numeric_form_name(facts[m].form);
    mr.form_evidence = facts[m].form_evidence;
    mr.model_id = model_id(model.name, facts[m].form);
    mr.opset = facts[m].opset;
    mr.nodes = facts[m].nodes;
    mr.inputs_described = inputs_described[m];
    const Cell& floor = cells[m][0];
    const auto reference = read_outputs(floor.round_outputs.at(0));
    for (std::size_t i = 0; i < n; ++i) {
      const Cell& c = cells[m][i];
      const RungSpec& rung = *c.rung;
      BenchRow row;
      row.rung = rung.name;
      row.display = rung.display;
      row.provider = rung.provider;
      row.provider_version = c.provider_version;
      const NumericForm form = facts[m].form == NumericForm::kF32 && builds_fp16(rung, Role::kGeneric) ? NumericForm::kF16 : facts[m].form;
      row.form = numeric_form_name(form);
      row.model_id = model_id(model.name, form);
      row.ok = !c.failed;
      if (c.failed) {
        row.failure_class = c.failure_class;
        row.failure_reason = c.failure_reason;
        row.match_detail = "the rung did not run";
        row.tolerance = o.tolerance;
        mr.rows.push_back(std::move(row));
        continue;
      }
      row.build_cold_ms = c.build_cold_ms;
      if (!c.cached_builds.empty()) row.build_cached_ms = median(c.cached_builds);
      row.first_run_ms = c.first_run_ms;
      row.latency = to_latency(c.runs);
      for (const auto& [round, p50] : c.round_p50) row.round_p50_ms.push_back(p50);
      double total_ms = 0;
      for (double x : c.runs) total_ms += x;
      row.throughput_per_s = total_ms > 0 ? 1000.0 * static_cast<double>(c.runs.size()) / total_ms : 0;
      row.peak_rss_mb = c.peak_rss_kb / 1024.0;
      row.evidence = c.evidence;
      // Ratios are paired within a round: both sides ran minutes apart at most, on the same machine state.
      std::vector<double> ratios;
      for (const auto& [round, p50] : c.round_p50) {
        auto f = floor.round_p50.find(round);
        if (f != floor.round_p50.end() && f->second > 0) ratios.push_back(p50 / f->second);
      }
      if (!ratios.empty()) row.ratio_to_floor = median(ratios);
      if (!c.bare_runs.empty()) row.bare_p50_ms = median(c.bare_runs);

      // Output match: every round's outputs against the CPU's first.
      // An fp16 engine is held to the fp16 tolerance: its model id already says it computes in f16.
      row.tolerance = form == NumericForm::kF16 && facts[m].form == NumericForm::kF32 ? Tolerance::approximate() : o.tolerance;
      row.match = i == 0 ? OutputMatch::kReference : OutputMatch::kMatch;
      for (const auto& [round, dir] : c.round_outputs) {
        if (i == 0 && round == 0) continue;
        auto cmp = compare_outputs(reference, read_outputs(dir), row.tolerance);
        for (const auto& t : cmp.outputs) {
          row.max_abs_diff = std::max(row.max_abs_diff, t.max_abs);
          row.max_rel_diff = std::max(row.max_rel_diff, t.max_rel);
        }
        if (!cmp.faithful() && row.match != OutputMatch::kMismatch) {
          row.match = OutputMatch::kMismatch;
          row.match_detail = i == 0 ? fmt::format("round {} of the CPU differs from round 1: {}", round + 1, cmp.first_problem())
                                    : cmp.first_problem();
        }
      }
      if (row.match == OutputMatch::kReference) row.match_detail = "the reference: other rows are compared with this one";

      // Which provider ran the nodes: a rung that ran none is the CPU with extra steps.
      if (i != 0 && !c.nodes.empty()) {
        int accelerated = 0;
        for (const auto& [p, count] : c.nodes) accelerated += p == "CPUExecutionProvider" ? 0 : count;
        if (accelerated == 0) {
          row.evidence.push_back("every node ran on CPUExecutionProvider: this row measures the CPU");
          report.warnings.push_back(fmt::format("{} on {}: the provider ran no node; its figures are the CPU's", rung.display, model.name));
        }
      }
      if (row.high_variation()) {
        report.warnings.push_back(fmt::format("{} on {}: coefficient of variation {:.1f}% (above {:.0f}%): the figures are noisy; "
                                              "close other work or raise --runs",
                                              rung.display, model.name, row.latency.cv * 100, kHighVariation * 100));
      }
      if (row.bare_p50_ms && *row.bare_p50_ms > 0) {
        double ratio = row.latency.p50 / *row.bare_p50_ms;
        row.evidence.push_back(fmt::format("bare OrtApi::Run loop in the same process, interleaved: p50 {:.4f} ms; rung's p50 / bare p50 = {:.4f}",
                                           *row.bare_p50_ms, ratio));
        if (std::abs(ratio - 1) > 0.03) {
          report.warnings.push_back(fmt::format("{} on {}: rung's p50 is {:.1f}% off the bare C API loop's (target: within 3%)",
                                                rung.display, model.name, (ratio - 1) * 100));
        }
      }
      mr.rows.push_back(std::move(row));
    }
    report.models.push_back(std::move(mr));
  }
  return report;
}

}  // namespace rung
