// `rung probe`: run the probe in the foreground, print one row per rung, write the cache.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "model_args.h"
#include "runtime_args.h"
#include "rung/probe.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

struct ProbeCliOptions {
  ModelArgs models;
  RuntimeArgs runtime;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  std::vector<std::string> probe_models;
  std::string cache_dir;
  std::string hardware_root = "/";
  std::string use_rung;
  bool json = false;
  bool reprobe = false;
  bool in_process = false;
  double deadline_s = 180;
  int runs = 3;
  int threads = 0;
  double accept_ratio = 1.0;
};

std::string ms(double v) { return v > 0 ? fmt::format("{:.2f}", v) : "-"; }

void print_row(std::size_t width, const std::string& rung, const Measurement& m, const std::string& verdict, const std::string& reason) {
  std::string ratio = m.ratio() > 0 ? fmt::format("{:.2f}x", m.ratio()) : "-";
  fmt::print("  {:<{}} {:<32} {:>9} {:>10} {:>7}  {}{}\n", rung, width, m.model, ms(m.build_ms), ms(m.median_ms), ratio, verdict,
             reason.empty() ? "" : ": " + reason);
}

void print_table(const ProbeOutcome& out) {
  // As wide as the longest rung's name ("WebGPU on lavapipe (software)"), 20 at least.
  std::size_t width = std::max<std::size_t>(20, out.floor.display.size() + 8);
  for (const auto& r : out.rungs) width = std::max(width, r.display.size());
  fmt::print("  {:<{}} {:<32} {:>9} {:>10} {:>7}  {}\n", "rung", width, "model", "build ms", "median ms", "ratio", "verdict");
  for (const auto& m : out.floor.models) print_row(width, out.floor.display + " (floor)", m, m.verdict == Verdict::kTaken ? "floor" : verdict_name(m.verdict), m.reason);
  for (const auto& r : out.rungs) {
    if (r.models.empty()) {
      fmt::print("  {:<{}} {:<32} {:>9} {:>10} {:>7}  {}{}\n", r.display, width, "-", "-", "-", "-", verdict_name(r.verdict),
                 r.reason.empty() ? "" : ": " + r.reason);
      continue;
    }
    for (const auto& m : r.models) print_row(width, r.display, m, verdict_name(m.verdict), m.reason);
  }
}

int run_probe_command(const ProbeCliOptions& c) {
  c.software_gpu.apply();
  ProbeOptions o;
  o.cache_dir = c.cache_dir.empty() ? default_cache_dir() : fs::path(c.cache_dir);
  o.hardware_root = c.hardware_root;
  o.runs = c.runs;
  o.threads = c.threads;
  o.acceptance_ratio = c.accept_ratio;
  o.reprobe = c.reprobe;
  o.isolate = !c.in_process;
  o.deadline = std::chrono::milliseconds(static_cast<long long>(c.deadline_s * 1000));
  c.runtime.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  if (!c.use_rung.empty()) o.forced_rung = c.use_rung;
  if (c.runs < 1) throw CliError(kExitUsage, fmt::format("--runs must be at least 1, not {}", c.runs));
  if (c.deadline_s <= 0) throw CliError(kExitUsage, "--deadline must be positive");

  for (auto& m : c.models.resolve()) o.models.push_back({m.name, m.f32, m.inputs});
  o.probe_models = c.probe_models;

  const bool terminal = ::isatty(STDERR_FILENO) != 0 && !c.json;
  if (terminal) {
    o.on_progress = [](const std::string& line) { fmt::print(stderr, "\r\033[Kprobing {}", line); };
  }
  o.on_log = [terminal](const std::string& line) { fmt::print(stderr, "{}rung: {}\n", terminal ? "\r\033[K" : "", line); };
  auto result = run_probe(o);
  if (terminal) fmt::print(stderr, "\r\033[K");
  if (!result) throw CliError(result.error());
  const ProbeOutcome& out = *result;
  for (const auto& e : out.model_errors) fmt::print(stderr, "rung: {}\n", e);
  if (c.json) {
    fmt::print("{}\n", out.to_json());
  } else {
    fmt::print("{}\n", out.about_line());
    if (out.from_cache) {
      fmt::print("(from the cache {}: nothing changed since it was written; --force probes again)\n", out.cache_file.string());
    }
    fmt::print("\n");
    print_table(out);
  }
  // Inputs refused before anything ran are an input error, not a no.
  if (out.inputs_refused) return kExitUsage;
  return out.model_errors.empty() ? kExitOk : kExitFailed;
}

}  // namespace

void add_probe_command(CLI::App& app) {
  auto c = std::make_shared<ProbeCliOptions>();
  auto* cmd = app.add_subcommand("probe", "Choose this device's rung by building, timing and checking each one; cache the choice");
  c->models.add_to(*cmd);
  cmd->add_option("--probe-model", c->probe_models, "Probe with this registered model (default: the smallest)");
  cmd->add_flag("--json", c->json, "Print the outcome as JSON");
  cmd->add_flag("--force", c->reprobe, "Probe again even when the cache is valid");
  cmd->add_flag("--in-process", c->in_process, "Build sessions in this process (the attempt-file rule guards against crashes)");
  cmd->add_option("--deadline", c->deadline_s, "Seconds each rung may take per model before it is killed")->capture_default_str();
  cmd->add_option("--runs", c->runs, "Timed runs per rung after one untimed run")->capture_default_str();
  cmd->add_option("--threads", c->threads, "Intra-op threads per session (0: ONNX Runtime's default)")->capture_default_str();
  cmd->add_option("--accept-ratio", c->accept_ratio, "Take a rung whose median is below the floor's times this")->capture_default_str();
  cmd->add_option("--use-rung", c->use_rung, "Force a rung at or below the chosen one (also RUNG_FORCE_RUNG)");
  cmd->add_option("--cache-dir", c->cache_dir, "Where the decision is cached (default: RUNG_CACHE_DIR or ~/.cache/rung/probe)");
  c->runtime.add_to(*cmd);
  c->plugins.add_to(*cmd);
  c->software_gpu.add_to(*cmd);
  cmd->add_option("--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c] {
    int code = run_probe_command(*c);
    if (code != kExitOk) throw CliError(code, "some models could not be probed (see above)");
  });
}

}  // namespace rung::cli
