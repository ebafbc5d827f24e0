// `rung conform`'s run: the tests found and filtered first (a bad folder or
// filter costs no worker), then each column's rung in one worker process for
// the whole suite, test by test; a worker that crashes or misses the deadline
// costs that test, and a new worker takes the rest.
#include <fmt/format.h>

#include <cmath>

#include "conform/filter.h"
#include "conform/suite.h"
#include "core/thread_limit.h"
#include "jobs/conform_worker.h"
#include "jobs/runner.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/termination.h"
#include "os/work_dir.h"
#include "os/worker_location.h"
#include "rung/conform.h"
#include "rung/hardware.h"
#include "rung/rung_names.h"
#include "runtime/plugin_rungs.h"
#include "runtime/resolver.h"
#include "runtime/software_gpu.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDebianTestData = "/usr/share/libonnx-testdata/data";

std::string sanitized(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return s;
}

// One column's worker: a "conform" job, started, ready, and started again after a test kills it.
class ColumnWorker {
 public:
  ColumnWorker(const ConformOptions& o, const JobRunner& runner, fs::path dir, ConformJob job)
      : o_(o), runner_(runner), dir_(std::move(dir)), job_(std::move(job)) {}

  // The worker's first answer: the rung's display and provider, or why it cannot start.
  Result<nlohmann::json> start() {
    ++starts_;
    job_.profile_dir = dir_ / "profiles";
    std::error_code ec;
    create_directories_unless_ending(job_.profile_dir, ec);
    // A directory per start: the log of a worker a test killed stays to be read.
    auto started = runner_.start({"conform", job_, o_.deadline, dir_ / fmt::format("worker-{}", starts_), {}, nullptr, o_.worker_memory_limit_mb});
    if (!started) return started.error();
    worker_ = std::move(*started);
    auto line = worker_->receive();
    if (!line) return Error{ErrorCode::kRuntime, line.error().message};
    auto parsed = parse_json(*line);
    if (!parsed) return Error{ErrorCode::kRuntime, fmt::format("malformed answer from the worker: {}", parsed.error().message)};
    try {
      const auto& j = *parsed;
      if (!j.at("ready").get<bool>()) return Error{ErrorCode::kUnsupported, j.at("error").get<std::string>()};
      return j;
    } catch (const nlohmann::json::exception& e) {
      return Error{ErrorCode::kRuntime, fmt::format("malformed answer from the worker: {}", e.what())};
    }
  }

  // One test; a crash or a missed deadline is the test's outcome, and the worker is replaced.
  ConformResult run(std::size_t index, const ConformTest& test) {
    if (!worker_) {
      if (auto s = start(); !s) return {"crashed", "the worker could not be started again: " + s.error().message, 0, 0, 0, 0, {}};
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (auto s = worker_->send(json_text(nlohmann::json{{"test", index}, {"dir", path_json(test.dir)}})); !s) {
      worker_.reset();
      return {"crashed", s.error().message, 0, 0, 0, 0, {}};
    }
    auto line = worker_->receive();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!line) {
      const bool late = worker_->outcome() && worker_->outcome()->status == JobOutcome::Status::kTimedOut;
      worker_.reset();
      return {late ? "timed out" : "crashed", line.error().message, 0, 0, 0, ms, {}};
    }
    auto parsed = parse_json(*line);
    if (!parsed) {
      worker_.reset();
      return {"crashed", fmt::format("malformed answer from the worker: {}", parsed.error().message), 0, 0, 0, ms, {}};
    }
    try {
      const auto c = parsed->at("result").get<ConformCaseResult>();
      return {conform_outcome_name(c.outcome), c.reason, c.max_abs, c.max_rel, c.data_sets, c.ms, c.nodes_by_provider};
    } catch (const nlohmann::json::exception& e) {
      worker_.reset();
      return {"crashed", fmt::format("malformed answer from the worker: {}", e.what()), 0, 0, 0, ms, {}};
    }
  }

  void finish() {
    if (worker_) worker_->finish(std::chrono::seconds(10));
    worker_.reset();
  }

 private:
  const ConformOptions& o_;
  const JobRunner& runner_;
  fs::path dir_;
  ConformJob job_;
  std::unique_ptr<StartedJob> worker_;
  int starts_ = 0;
};

// The rungs asked for, or this device's ladder on the chosen build (plugins first, the CPU last).
Result<std::vector<ConformRung>> columns_asked(const ConformOptions& o) {
  if (!o.rungs.empty()) return o.rungs;
  Hardware hw = detect_hardware(o.hardware_root);
  auto discovery = discover_runtimes(o.runtimes, hw);
  if (!discovery) return discovery.error();
  std::vector<ConformRung> out;
  auto ladder = effective_ladder(hw, *discovery->chosen_build(), o.plugin_dirs, o.runtimes.allow_writable_plugins);
  if (!ladder) return ladder.error();
  for (const auto& r : *ladder) {
    ConformRung c;
    c.rung = r.append == AppendMethod::kPluginDevice ? r.plugin_library : r.name;
    out.push_back(c);
  }
  return out;
}

void run_column(const ConformOptions& o, const JobRunner& runner, const fs::path& dir, const std::vector<ConformTest>& tests,
                ConformColumn& column) {
  ConformJob job;
  job.target.runtime_library = column.runtime_library;
  job.target.allow_writable_runtime = o.runtimes.allow_writable_by_others;
  job.target.rung = named_rung(column.rung);
  job.target.threads = o.threads;
  job.target.provider_options = column.provider_options;
  job.tolerance = o.tolerance;
  ColumnWorker w(o, runner, dir, job);
  auto ready = w.start();
  column.results.assign(tests.size(), ConformResult{});
  if (!ready) {
    column.unavailable = ready.error().message;
    w.finish();
    return;
  }
  column.provider = ready->value("provider", "");
  for (std::size_t i = 0; i < tests.size(); ++i) {
    if (!tests[i].skipped.empty()) {
      column.results[i] = {"skipped", tests[i].skipped, 0, 0, 0, 0, {}};
      continue;
    }
    if (o.on_progress) o.on_progress(fmt::format("{}: test {} of {} · {}", column.label, i + 1, tests.size(), tests[i].id));
    column.results[i] = w.run(i, tests[i]);
  }
  w.finish();
}

}  // namespace

Result<ConformReport> run_conform(const ConformOptions& o) {
  RUNG_RETURN_IF_ERROR(check_deadline(o.deadline, "the deadline"));
  RUNG_RETURN_IF_ERROR(check_thread_count(o.threads, "threads"));
  if (!(std::isfinite(o.tolerance.atol) && o.tolerance.atol >= 0 && std::isfinite(o.tolerance.rtol) && o.tolerance.rtol >= 0)) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("the tolerance (atol {}, rtol {}) must be finite and not negative", o.tolerance.atol, o.tolerance.rtol)};
  }
  ConformReport report;
  report.suites = o.suites;
  if (report.suites.empty()) {
    std::error_code ec;
    if (!fs::is_directory(kDebianTestData, ec)) {
      return Error{ErrorCode::kNotFound, fmt::format("no suite given, and Debian's libonnx-testdata is not installed ({} does not exist): "
                                                     "give --suite DIR or install libonnx-testdata", kDebianTestData)};
    }
    report.suites.emplace_back(kDebianTestData);
  }
  report.tolerance = o.tolerance;
  report.tolerance_name = o.tolerance_name;
  auto tests = find_tests(report.suites);
  if (!tests) return tests.error();
  if (!o.filter.empty()) {
    auto filter = TestFilter::make(o.filter);
    if (!filter) return filter.error();
    std::erase_if(*tests, [&](const ConformTest& t) { return !filter->finds_in(t.id); });
    if (tests->empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("--filter '{}' leaves no test", o.filter)};
  }
  report.tests = std::move(*tests);

  auto asked = columns_asked(o);
  if (!asked) return asked.error();
  RuntimeResolver resolver(o.runtimes);
  for (auto c : *asked) {
    // A plugin library is named by path: absolute for the worker, and there before any worker starts.
    const bool plugin = !named_rung(c.rung).plugin_library.empty();
    if (plugin) {
      RUNG_RETURN_IF_ERROR(check_regular_file(c.rung, "rung " + c.rung));
      c.rung = fs::absolute(c.rung).lexically_normal().string();
    }
    auto rt = resolver.resolve(c.runtime);
    if (!rt) return Error{rt.error().code, fmt::format("rung {}: {}", c.rung, rt.error().message)};
    ConformColumn column;
    column.rung = c.rung;
    column.display = rung_display_name(c.rung);  // one display name per rung (rung/rung_names.h)
    column.provider_options = c.provider_options;
    column.runtime_version = rt->version;
    column.runtime_library = rt->library;
    column.id = fmt::format("{}@{}", rung_id(c.rung), rt->version);
    for (const auto& [k, v] : c.provider_options) column.id += fmt::format(",{}={}", k, v);
    column.label = fmt::format("{} · ONNX Runtime {}", column.display, rt->version);
    report.columns.push_back(std::move(column));
  }
  for (std::size_t i = 0; i < report.columns.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (report.columns[k].id == report.columns[i].id) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("rung {} is asked for twice", report.columns[i].id)};
      }
    }
  }

  const fs::path worker = find_worker(o.worker, o.runtimes.read_environment);
  if (worker.empty()) {
    return Error{ErrorCode::kNotFound, "the rung-probe-worker executable was not found (beside rung, in RUNG_PROBE_WORKER, or installed)"};
  }
  WorkDir work;
  RUNG_RETURN_IF_ERROR(work.open(o.work_dir, "rung-conform"));
  const JobRunner runner(worker);
  for (auto& column : report.columns) run_column(o, runner, work.path() / sanitized(column.id), report.tests, column);
  return report;
}

}  // namespace rung
