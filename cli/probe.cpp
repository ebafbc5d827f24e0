// `rung probe`: run the probe in the foreground, print one row per rung, write the cache.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "progress.h"
#include "model_args.h"
#include "output_check.h"
#include "reason_notes.h"
#include "runtime_args.h"
#include "rung/print.h"
#include "rung/probe.h"
#include "rung/path_text.h"
#include "rung/ratio_text.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

struct ProbeCliOptions {
  ModelArgs models;
  RuntimeArgs runtime;
  WorkerArgs workers;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  std::vector<std::string> probe_models;
  std::string cache_dir;
  std::string hardware_root = "/";
  std::string use_rung;
  JsonOutput json;
  bool reprobe = false;
  bool in_process = false;
  double deadline_s = 180;
  int runs = 3;
  int threads = ProbeOptions::kInferenceThreads;  // as an engine runs, so probe and prepare share one cache
  double accept_ratio = 1.0;
  double min_gain = 0.05;
  double time_budget_s = 2;
  double min_placed = 0.10;
};

std::string ms(double v) { return v > 0 ? fmt::format("{:.2f}", v) : "-"; }

std::string ratio_cell(const Measurement& m) {
  if (m.ratio() <= 0) return "-";
  if (m.pairs == 0) return rung::ratio_cell(m.ratio());
  return rung::ratio_cell(m.ratio(), m.ratio_low, m.ratio_high);
}

// Nodes the rung's own provider ran, of all the profile names, and their share of run time.
std::string placed_cell(const Measurement& m) {
  if (!m.placement_known) return "-";
  return fmt::format("{}/{} {:.0f}%", m.placed_nodes, m.total_nodes, m.placed_time_share * 100);
}

void print_cells(std::size_t width, const std::string& rung, const std::string& model, const std::string& build, const std::string& median,
                 const std::string& ratio, const std::string& placed, const std::string& verdict) {
  rung::print("  {:<{}} {:<32} {:>9} {:>10} {:>20} {:>13}  {}\n", rung, width, model, build, median, ratio, placed, verdict);
}

// The verdict and its reason; a long reason (the same one on every row of a rung) as a note under the table.
std::string verdict_cell(ReasonNotes& notes, const std::string& verdict, const std::string& reason) {
  return verdict + (reason.empty() ? "" : ": " + notes.cell(reason));
}

void print_row(std::size_t width, ReasonNotes& notes, const std::string& rung, const Measurement& m, const std::string& verdict, const std::string& reason) {
  print_cells(width, rung, m.model, ms(m.build_ms), ms(m.median_ms), ratio_cell(m), placed_cell(m), verdict_cell(notes, verdict, reason));
}

void print_table(const ProbeOutcome& out) {
  ReasonNotes notes;
  // As wide as the longest rung's name ("WebGPU on lavapipe (software)"), 20 at least.
  std::size_t width = std::max<std::size_t>(20, out.floor.display.size() + 8);
  for (const auto& r : out.rungs) width = std::max(width, r.display.size());
  print_cells(width, "rung", "model", "build ms", "median ms", "ratio [interval]", "placed", "verdict");
  for (const auto& m : out.floor.models) print_row(width, notes, out.floor.display + " (floor)", m, m.verdict == Verdict::kTaken ? "floor" : verdict_name(m.verdict), m.reason);
  for (const auto& r : out.rungs) {
    if (r.models.empty()) {
      print_cells(width, r.display, "-", "-", "-", "-", "-", verdict_cell(notes, verdict_name(r.verdict), r.reason));
      continue;
    }
    for (const auto& m : r.models) print_row(width, notes, r.display, m, verdict_name(m.verdict), m.reason);
  }
  rung::print("{}", notes.text());
}

// The first line: the library's summary, and where the reasons are when a rung was passed over.
std::string first_line(const ProbeOutcome& out) {
  const bool passed_over = std::any_of(out.rungs.begin(), out.rungs.end(), [](const RungOutcome& r) {
    return r.verdict != Verdict::kTaken && r.verdict != Verdict::kNotTried;
  });
  return out.about_line() + (passed_over ? " (see the table)" : "");
}

int run_probe_command(const ProbeCliOptions& c, ProbeDecision decide) {
  // The models first: one that cannot be read is named before anything else happens.
  const auto models = c.models.resolve();
  std::vector<NamedPath> inputs = {{"--ort-dir", path_from_utf8(c.runtime.ort_dir)}};
  for (const auto& m : models) inputs.push_back({"the model " + m.name, m.f32});
  for (const auto& s : c.models.input_specs) inputs.push_back({"--input-spec", path_from_utf8(file_of_assignment(s))});
  check_outputs_before_work({c.json.output()}, inputs, path_from_utf8(c.cache_dir));
  c.software_gpu.apply();
  ProbeOptions o;
  o.cache_dir = c.cache_dir.empty() ? default_cache_dir() : path_from_utf8(c.cache_dir);
  check_output_directory_before_work({"--cache-dir", o.cache_dir}, inputs);  // written in: never a file (a model, say), nor an input's folder
  o.hardware_root = path_from_utf8(c.hardware_root);
  o.probe_runs = c.runs;
  o.threads = c.threads;
  o.acceptance_ratio = c.accept_ratio;
  o.min_gain = c.min_gain;
  o.time_budget_s = c.time_budget_s;
  o.min_placed_share = c.min_placed;
  o.reprobe = c.reprobe;
  o.isolate = !c.in_process;
  o.probe_deadline = deadline_from_seconds(c.deadline_s);
  o.worker_memory_limit_mb = c.workers.memory_mb;
  c.runtime.apply_to(o.runtimes);
  c.plugins.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  if (!c.use_rung.empty()) o.forced_rung = c.use_rung;

  for (auto& m : models) o.models.push_back({m.name, m.f32, m.inputs});
  o.probe_models = c.probe_models;

  const bool terminal = progress_on_terminal();
  if (terminal) {
    o.on_progress = [](const std::string& line) { show_progress_line("probing " + line); };
  }
  o.on_log = [terminal](const std::string& line) {
    if (terminal) clear_progress_line();
    rung::print(stderr, "rung: {}\n", line);
  };
  auto result = decide(o);
  if (terminal) clear_progress_line();
  if (!result) throw CliError(result.error());
  const ProbeOutcome& out = *result;
  for (const auto& e : out.model_errors) rung::print(stderr, "rung: {}\n", e);
  if (c.json.on_stdout() || c.json.to_file()) c.json.emit_text(out.to_json());
  if (!c.json.on_stdout()) {
    rung::print("{}\n", first_line(out));
    if (out.from_cache) {
      rung::print("(from the cache {}: nothing changed since it was written; --force probes again)\n", out.cache_file.string());
    }
    rung::print("\n");
    print_table(out);
  }
  // Inputs refused before anything ran are an input error, not a no.
  if (out.inputs_refused || out.model_unloadable) return kExitUsage;  // an input error, not a failed run
  return out.model_errors.empty() ? kExitOk : kExitFailed;
}

}  // namespace

void add_probe_command(CLI::App& app, ProbeDecision decide) {
  auto c = std::make_shared<ProbeCliOptions>();
  auto* cmd = app.add_subcommand("probe", "Choose this device's rung by building, timing and checking each one; cache the choice");
  c->models.add_to(*cmd);
  add_text(*cmd, "--probe-model", c->probe_models, "Probe with this registered model (default: the smallest)");
  c->json.add_to(*cmd, "the outcome");
  cmd->add_flag("--force", c->reprobe, "Probe again even when the cache is valid");
  cmd->add_flag("--in-process", c->in_process, "Build sessions in this process (the attempt-file rule guards against crashes)");
  add_number(*cmd, "--deadline", c->deadline_s, "Seconds each rung may take per model before it is killed", deadline_seconds())->capture_default_str();
  add_number(*cmd, "--runs", c->runs, "Timed runs per rung after one untimed run", knob_range<int>("probe_runs"))->capture_default_str();
  add_number(*cmd, "--threads", c->threads,
             "Intra-op threads per session (default: the engine's inference threads on this CPU, as prepare runs, so the two share "
             "one cache; 0: ONNX Runtime's default)",
             thread_count());
  add_number(*cmd, "--accept-ratio", c->accept_ratio, "Take a rung whose time is surely below the floor's times this (less --min-gain)",
             acceptance_ratio())
      ->capture_default_str();
  // The gain is a share below 1 (1 itself would ask for a rung that takes no time); the library refuses 1 too.
  add_number(*cmd, "--min-gain", c->min_gain, "What moving to a rung must gain: the interval of its ratio must lie under the acceptance ratio less this share",
             {0, 0.999, "the floor's time"})
      ->capture_default_str();
  add_number(*cmd, "--time-budget", c->time_budget_s, "Seconds of further paired runs per rung and model while the clock cannot decide",
             {0, kMaxDeadlineSeconds, "seconds"})
      ->capture_default_str();
  add_number(*cmd, "--min-placed", c->min_placed, "Share of the nodes a rung's provider must run to be placed (from ONNX Runtime's profile)",
             {0, 1, "the nodes"})
      ->capture_default_str();
  add_text(*cmd, "--use-rung", c->use_rung, "Force a rung at or below the chosen one (also RUNG_FORCE_RUNG)");
  add_text(*cmd, "--cache-dir", c->cache_dir, "Where the decision is cached (default: RUNG_CACHE_DIR or ~/.cache/rung/probe)");
  c->runtime.add_to(*cmd);
  c->workers.add_to(*cmd);
  c->plugins.add_to(*cmd);
  c->software_gpu.add_to(*cmd);
  add_text(*cmd, "--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c, decide] {
    int code = run_probe_command(*c, decide);
    if (code != kExitOk) throw CliError(code, "some models could not be probed (see above)");
  });
}

}  // namespace rung::cli
