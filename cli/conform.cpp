// `rung conform`: ONNX's backend tests on every rung asked, each rung in one
// worker process; a summary per rung, a JSON record (--json, --out-json) and a grid (--html).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "progress.h"
#include "output_check.h"
#include "runtime_args.h"
#include "rung/conform.h"
#include "rung/print.h"
#include "rung/printable.h"

namespace rung::cli {
namespace {

struct ConformCliOptions {
  std::vector<std::string> suites, rungs;
  std::string filter, html, work_dir, hardware_root = "/";
  JsonOutput json;
  RuntimeArgs runtime;
  WorkerArgs workers;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  double atol = Tolerance::onnx_backend().atol;
  double rtol = Tolerance::onnx_backend().rtol;
  int threads = 1;
  double deadline_s = 120;
  bool details = false;
  bool report_only = false;  // a wrong answer is reported, not failed
};

// The outcomes that say a rung computed wrong or died: they fail the run unless
// --report-only. "runtime refused" and "not placed" say what a rung does not
// take, which a conformance grid reports but a rung is allowed.
constexpr const char* kWrongOutcomes[] = {"mismatch", "crashed", "timed out"};

int run_conform_command(const ConformCliOptions& c) {
  c.software_gpu.apply();
  ConformOptions o;
  for (const auto& s : c.suites) o.suites.emplace_back(s);
  for (const auto& spec : c.rungs) {
    auto r = ConformRung::parse(spec);
    if (!r) throw CliError(kExitUsage, "--rung " + r.error().message);
    o.rungs.push_back(*r);
  }
  o.filter = c.filter;
  const Tolerance onnx = Tolerance::onnx_backend();
  o.tolerance = {c.atol, c.rtol, onnx.nan_equal};
  o.tolerance_name = c.atol == onnx.atol && c.rtol == onnx.rtol ? "onnx_backend" : "given";
  o.threads = c.threads;
  o.deadline = deadline_from_seconds(c.deadline_s);
  o.worker_memory_limit_mb = c.workers.memory_mb;
  o.hardware_root = c.hardware_root;
  o.work_dir = c.work_dir;
  c.runtime.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  // No output may be an input (a suite, a plugin library, a runtime), the other output or a directory.
  {
    std::vector<NamedPath> inputs;
    for (const auto& s : c.suites) inputs.push_back({"--suite", s});
    for (const auto& r : o.rungs) {
      inputs.push_back({"--rung", r.rung.find('/') != std::string::npos ? r.rung : ""});
      inputs.push_back({"--rung ort=", r.runtime.find('/') != std::string::npos ? r.runtime : ""});
    }
    for (const auto& d : c.plugins.dirs) inputs.push_back({"--plugin-dir", d});
    inputs.push_back({"--ort-dir", c.runtime.ort_dir});
    check_outputs_before_work({c.json.output(), {"--html", c.html}}, inputs);
    for (auto& s : rung_state()) inputs.push_back(std::move(s));
    check_output_directory_before_work({"--work-dir", c.work_dir}, inputs);
  }
  const bool terminal = progress_on_terminal();
  if (terminal) o.on_progress = [](const std::string& line) { show_progress_line("conform: " + line); };
  auto report = run_conform(o);
  if (terminal) clear_progress_line();
  if (!report) throw CliError(report.error());
  // With the record on stdout, the text a person reads is left out.
  if (!c.json.on_stdout()) {
    rung::print("{}", report->table());
    if (c.details) rung::print("\n{}", report->details());
  }
  if (c.json.on_stdout() || c.json.to_file()) c.json.emit_text(report->to_json(command_line()));
  if (!c.html.empty()) {
    if (auto s = report->write_html(c.html); !s) throw CliError(s.error());
  }
  // rung's own gaps fail the run: every test must at least be judged.
  int unfed = 0;
  for (const auto& col : report->columns) unfed += col.unavailable.empty() ? col.counts().at("rung cannot feed it") : 0;
  if (unfed > 0) throw CliError(kExitFailed, fmt::format("conform: rung could not feed {} test{} (see \"rung cannot feed it\")", unfed, unfed == 1 ? "" : "s"));
  std::vector<std::string> wrong;
  for (const auto& col : report->columns) {
    if (!col.unavailable.empty()) continue;
    const auto counts = col.counts();
    for (const char* outcome : kWrongOutcomes) {
      if (int n = counts.at(outcome); n > 0) wrong.push_back(fmt::format("{} {} on {}", n, outcome, printable(col.id)));
    }
  }
  if (!wrong.empty() && !c.report_only) {
    throw CliError(kExitFailed, fmt::format("conform: {} (--report-only reports them without failing)", fmt::join(wrong, ", ")));
  }
  return kExitOk;
}

}  // namespace

void add_conform_command(CLI::App& app) {
  auto c = std::make_shared<ConformCliOptions>();
  auto* cmd = app.add_subcommand("conform", "Run ONNX's backend tests on each rung and compare with their expected outputs");
  cmd->footer(
      "RUNG: NAME[,ort=VERSION|DIR][,option.KEY=VALUE]  (NAME: cpu, a ladder rung such as webgpu, or a plugin EP library's path)\n"
      "  e.g. --rung cpu --rung cpu,ort=1.28.2 --rung webgpu --software-gpu\n"
      "Outcomes: pass, mismatch, not placed (the provider ran none of the nodes), runtime refused (ONNX Runtime's reason),\n"
      "rung cannot feed it, timed out, crashed. Default tolerance: ONNX's own for its backend tests (atol 1e-7, rtol 1e-3).\n"
      "Exit: 0 every test was judged and none mismatched, crashed or timed out; 1 one did (0 with --report-only), or rung could not feed some test;\n"
      "2 a usage or input error; 3 no such ONNX Runtime build.");
  add_text(*cmd, "--suite", c->suites, "A folder of tests in ONNX's backend-test layout, or of such folders (default: Debian's libonnx-testdata)");
  add_text(*cmd, "--rung", c->rungs, "Run on this rung (repeatable; default: this device's ladder)");
  add_text(*cmd, "--filter", c->filter, "Only tests whose id (\"node/test_abs\") this regular expression finds");
  c->json.add_to(*cmd, "the record (schemas/conform-record.schema.json)");
  add_text(*cmd, "--html", c->html, "Write the grid here: a row per operator with its counts per rung (problems first), its tests under it")->type_name("FILE");
  cmd->add_flag("--details", c->details, "List every test that did not pass, with its reason");
  cmd->add_flag("--report-only", c->report_only, "Exit 0 when a test mismatches, crashes or times out: report it, do not fail (rung's own gaps still fail)");
  add_number(*cmd, "--atol", c->atol, "Absolute tolerance", {0, 1e6})->capture_default_str();
  add_number(*cmd, "--rtol", c->rtol, "Relative tolerance", {0, 1e6})->capture_default_str();
  add_number(*cmd, "--threads", c->threads, "Intra-op threads per session (0: ONNX Runtime's default)", thread_count())->capture_default_str();
  add_number(*cmd, "--deadline", c->deadline_s, "Seconds a test may take before its worker is killed", deadline_seconds())->capture_default_str();
  c->runtime.add_to(*cmd);
  c->workers.add_to(*cmd);
  c->plugins.add_to(*cmd);
  c->software_gpu.add_to(*cmd);
  add_text(*cmd, "--work-dir", c->work_dir, "Keep the workers' logs here (default: a temporary directory, removed)")->group("");
  add_text(*cmd, "--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c] {
    int code = run_conform_command(*c);
    if (code != kExitOk) throw CliError(code, "conform failed");
  });
}

}  // namespace rung::cli
