// `rung conform`: ONNX's backend tests on every rung asked, each rung in one
// worker process; a summary per rung, a JSON record (--json) and a grid (--html).
#include <fmt/format.h>
#include <unistd.h>

#include <memory>

#include "commands.h"
#include "runtime_args.h"
#include "rung/conform.h"

namespace rung::cli {
namespace {

struct ConformCliOptions {
  std::vector<std::string> suites, rungs;
  std::string filter, json, html, work_dir, hardware_root = "/";
  RuntimeArgs runtime;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  double atol = Tolerance::onnx_backend().atol;
  double rtol = Tolerance::onnx_backend().rtol;
  int threads = 1;
  double deadline_s = 120;
  bool details = false;
};

int run_conform_command(const ConformCliOptions& c) {
  if (c.deadline_s <= 0) throw CliError(kExitUsage, "--deadline must be positive");
  if (c.threads < 0) throw CliError(kExitUsage, "--threads must be 0 (ONNX Runtime's default) or more");
  if (c.atol < 0 || c.rtol < 0) throw CliError(kExitUsage, "--atol and --rtol must not be negative");
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
  o.deadline = std::chrono::milliseconds(static_cast<long long>(c.deadline_s * 1000));
  o.hardware_root = c.hardware_root;
  o.work_dir = c.work_dir;
  c.runtime.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) o.on_progress = [](const std::string& line) { fmt::print(stderr, "\r\033[Kconform: {}", line); };
  auto report = run_conform(o);
  if (terminal) fmt::print(stderr, "\r\033[K");
  if (!report) throw CliError(report.error());
  fmt::print("{}", report->table());
  if (c.details) fmt::print("\n{}", report->details());
  if (!c.json.empty()) {
    if (auto s = report->write_json(c.json, command_line()); !s) throw CliError(s.error());
  }
  if (!c.html.empty()) {
    if (auto s = report->write_html(c.html); !s) throw CliError(s.error());
  }
  // rung's own gaps fail the run: every test must at least be judged.
  int unfed = 0;
  for (const auto& col : report->columns) unfed += col.unavailable.empty() ? col.counts().at("rung cannot feed it") : 0;
  if (unfed > 0) throw CliError(kExitFailed, fmt::format("conform: rung could not feed {} test{} (see \"rung cannot feed it\")", unfed, unfed == 1 ? "" : "s"));
  return kExitOk;
}

}  // namespace

void add_conform_command(CLI::App& app) {
  auto c = std::make_shared<ConformCliOptions>();
  auto* cmd = app.add_subcommand("conform", "Run ONNX's backend tests on each rung and compare with their expected outputs");
  cmd->footer(
      "RUNG: NAME[,ort=VERSION|DIR][,option.KEY=VALUE]  (NAME: cpu, a ladder rung such as webgpu, or a plugin EP library .so)\n"
      "  e.g. --rung cpu --rung cpu,ort=1.28.2 --rung webgpu --software-gpu\n"
      "Outcomes: pass, mismatch, not placed (the provider ran none of the nodes), runtime refused (ONNX Runtime's reason),\n"
      "rung cannot feed it, timed out, crashed. Default tolerance: ONNX's own for its backend tests (atol 1e-7, rtol 1e-3).\n"
      "Exit: 0 every test was judged, 1 rung could not feed some test, 2 a usage or input error, 3 no such ONNX Runtime build.");
  cmd->add_option("--suite", c->suites, "A folder of tests in ONNX's backend-test layout, or of such folders (default: Debian's libonnx-testdata)");
  cmd->add_option("--rung", c->rungs, "Run on this rung (repeatable; default: this device's ladder)");
  cmd->add_option("--filter", c->filter, "Only tests whose id (\"node/test_abs\") this regular expression finds");
  cmd->add_option("--json", c->json, "Write the record here (schemas/conform-record.schema.json)");
  cmd->add_option("--html", c->html, "Write the grid of operators x rungs here");
  cmd->add_flag("--details", c->details, "List every test that did not pass, with its reason");
  cmd->add_option("--atol", c->atol, "Absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", c->rtol, "Relative tolerance")->capture_default_str();
  cmd->add_option("--threads", c->threads, "Intra-op threads per session (0: ONNX Runtime's default)")->capture_default_str();
  cmd->add_option("--deadline", c->deadline_s, "Seconds a test may take before its worker is killed")->capture_default_str();
  c->runtime.add_to(*cmd);
  c->plugins.add_to(*cmd);
  c->software_gpu.add_to(*cmd);
  cmd->add_option("--work-dir", c->work_dir, "Keep the workers' logs here (default: a temporary directory, removed)")->group("");
  cmd->add_option("--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c] {
    int code = run_conform_command(*c);
    if (code != kExitOk) throw CliError(code, "conform failed");
  });
}

}  // namespace rung::cli
