// `rung prepare`: start the engine as an application would, let the probe report
// and the engines land, then say where each model runs and what it computes.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "progress.h"
#include "model_args.h"
#include "output_check.h"
#include "reason_notes.h"
#include "runtime_args.h"
#include "rung/engine_core.h"
#include "rung/print.h"
#include "rung/rung_names.h"
#include "rung/variants.h"
#include "rung/path_text.h"
#include "variants_args.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

struct PrepareOptions {
  ModelArgs models;
  VariantArgs variants;
  RuntimeArgs runtime;
  WorkerArgs workers;
  PluginArgs plugins;
  std::string cache_dir;
  std::string hardware_root = "/";
  std::string use_rung;
  double accept_ratio = 1.0;
  double deadline_s = 180;        // the probe's, per rung and model, as `rung probe --deadline`
  double build_deadline_s = 1800;  // per engine build
  int threads = 0;
  bool in_process = false;
  JsonOutput json;
};

int run_prepare(const PrepareOptions& c) {
  core::EngineOptions o;
  // The models first: one that cannot be read is named before anything else happens.
  // A manifest's groups, each resolved to its variant when the engine starts: the bundled one unless models are named.
  if (c.variants.given() || c.models.models.empty()) {
    if (!c.models.roles.empty()) throw CliError(kExitUsage, "--role: a manifest's groups declare their roles");
    auto [manifest, deployment] = c.variants.load();
    if (auto s = variants::attach(o, manifest, &deployment); !s) throw CliError(kExitUsage, s.error().message);
    c.models.apply_roles_and_specs(o.models);
  } else {
    o.models = c.models.resolve();
  }
  o.cache_dir = c.cache_dir.empty() ? default_cache_dir() : path_from_utf8(c.cache_dir);
  std::vector<NamedPath> inputs = {{"--ort-dir", path_from_utf8(c.runtime.ort_dir)}, {"--variants", path_from_utf8(c.variants.manifest)}, {"--deployment", path_from_utf8(c.variants.deployment)}};
  for (const auto& m : o.models) inputs.push_back({"the model " + m.name, m.f32});
  for (const auto& s : c.models.input_specs) inputs.push_back({"--input-spec", path_from_utf8(file_of_assignment(s))});
  check_outputs_before_work({c.json.output()}, inputs, o.cache_dir);
  check_output_directory_before_work({"--cache-dir", o.cache_dir}, inputs);  // written in: never a file (a model, say), nor an input's folder
  o.hardware_root = path_from_utf8(c.hardware_root);
  o.acceptance_ratio = c.accept_ratio;
  o.inference_threads = c.threads;
  o.isolate = !c.in_process;
  c.runtime.apply_to(o.runtimes);
  o.worker_memory_limit_mb = c.workers.memory_mb;
  o.probe_deadline = deadline_from_seconds(c.deadline_s);
  o.build_deadline = deadline_from_seconds(c.build_deadline_s);
  c.plugins.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  if (!c.use_rung.empty()) o.forced_rung = c.use_rung;
  // On a terminal, the count redrawn in place ("Preparing engines · 3 of 6"); anywhere, each
  // engine failure said once, on a line of its own, as it happens.
  const bool terminal = progress_on_terminal();
  auto said = std::make_shared<std::vector<std::string>>();
  auto mutex = std::make_shared<std::mutex>();
  auto settled = std::make_shared<bool>(false);  // the count is cleared then: a later failure is only said
  o.on_progress = [said, mutex, settled, terminal](const core::EngineProgress& p) {
    std::lock_guard lock(*mutex);
    for (const auto& f : p.failures) {
      if (std::find(said->begin(), said->end(), f) != said->end()) continue;
      said->push_back(f);
      if (terminal) clear_progress_line();
      rung::print(stderr, "rung: {}\n", f);
    }
    if (terminal && !*settled) show_progress_line(fmt::format("Preparing engines · {} of {}", p.landed, p.total));
  };
  auto engine = core::Engine::start(o);
  if (!engine) throw CliError(engine.error());
  (*engine)->wait_until_settled();
  if (terminal) {
    std::lock_guard lock(*mutex);
    *settled = true;
    clear_progress_line();
  }
  // A probe model the floor could not run is said first: it is why that model,
  // and maybe every model, stays on the CPU.
  const auto problems = (*engine)->probe_problems();
  for (const auto& e : problems.model_errors) rung::print(stderr, "rung: {}\n", e);
  auto job = (*engine)->open_job();
  if (!job) throw CliError(kExitFailed, job.error().message);

  nlohmann::json models = nlohmann::json::array();
  std::vector<std::string> rows;
  ReasonNotes notes;  // a long reason (a variant's pin, shared by many rows) once, under the table
  int failures = 0;
  const auto& choices = (*engine)->model_choices();
  for (const auto& m : o.models) {
    auto choice = choices.find(m.name);
    const std::string variant = choice == choices.end() ? "-" : choice->second.variant;
    auto s = (*job)->session(m.name);
    if (!s) {
      ++failures;
      models.push_back({{"model", m.name}, {"error", s.error().message}});
      rows.push_back(fmt::format("  {:<24} {:<16} {:<14} {:<28} {}", m.name, variant, "-", "-", notes.cell(s.error().message)));
      continue;
    }
    nlohmann::json row = {{"model", m.name},
                          {"role", role_name(m.role)},
                          {"rung", (*s)->rung()},
                          {"model_id", (*s)->model_id()},
                          {"reason", (*s)->placement_reason()}};
    if (choice != choices.end()) row["variant"] = {{"key", variant}, {"model_id", choice->second.model_id}, {"reason", choice->second.reason}};
    models.push_back(row);
    rows.push_back(fmt::format("  {:<24} {:<16} {:<14} {:<28} {}", m.name, variant, rung_display_name((*s)->rung()), (*s)->model_id(), notes.cell((*s)->placement_reason())));
    if (choice != choices.end()) rows.push_back(fmt::format("  {:<24} variant: {}", "", notes.cell(choice->second.reason)));
  }
  auto progress = (*engine)->progress();
  if (c.json.on_stdout() || c.json.to_file()) {
    nlohmann::json out = {{"schema", "rung-prepare"},
                          {"schema_version", 1},
                          {"about", (*engine)->about_line()},
                          {"rung", (*engine)->chosen_rung()},
                          {"reason", (*engine)->chosen_reason()},
                          {"inference_threads", (*engine)->inference_threads()},
                          {"engines", {{"total", progress.total}, {"landed", progress.landed}, {"failures", progress.failures}}},
                          {"models", models}};
    if (!problems.model_errors.empty()) out["probe_errors"] = problems.model_errors;
    c.json.emit(out);
  }
  if (!c.json.on_stdout()) {
    rung::print("{}\n", (*engine)->about_line());
    rung::print("rung: {} ({}); {} inference thread{}\n\n", rung_display_name((*engine)->chosen_rung()), (*engine)->chosen_reason(),
               (*engine)->inference_threads(), (*engine)->inference_threads() == 1 ? "" : "s");
    rung::print("  {:<24} {:<16} {:<14} {:<28} {}\n", "model", "variant", "rung", "model id", "why");
    for (const auto& r : rows) rung::print("{}\n", r);
    rung::print("{}", notes.text());
  }
  // Inputs refused, a model the CPU cannot load, or a setting the probe refused (a forced rung
  // not on this device's ladder) are input errors, as in `rung probe`.
  if (!problems.settings_refused.empty()) throw CliError(kExitUsage, problems.settings_refused);
  if (problems.model_unloadable) throw CliError(kExitUsage, "a model the CPU cannot load was given (see above)");
  if (problems.inputs_refused) return kExitUsage;
  return failures == 0 && progress.failures.empty() && problems.model_errors.empty() ? kExitOk : kExitFailed;
}

}  // namespace

void add_prepare_command(CLI::App& app) {
  auto c = std::make_shared<PrepareOptions>();
  auto* cmd = app.add_subcommand("prepare", "Start the engine as an application does: probe, build engines, show each model's placement");
  c->models.add_to(*cmd);
  c->variants.add_to(*cmd);
  c->json.add_to(*cmd, "the outcome");
  cmd->add_flag("--in-process", c->in_process, "Probe and build engines in this process instead of child processes");
  add_number(*cmd, "--threads", c->threads, "Inference threads (default: a big.LITTLE CPU's fast cores, else the physical cores minus two)",
             knob_range<int>("inference_threads"));
  add_number(*cmd, "--accept-ratio", c->accept_ratio, "Take a rung whose median is below the floor's times this", acceptance_ratio())
      ->capture_default_str();
  add_text(*cmd, "--use-rung", c->use_rung, "Force a rung at or below the chosen one (also RUNG_FORCE_RUNG)");
  add_text(*cmd, "--cache-dir", c->cache_dir, "Where the decision and the engines are cached (default: RUNG_CACHE_DIR or ~/.cache/rung/probe)");
  c->runtime.add_to(*cmd);
  c->workers.add_to(*cmd);
  add_number(*cmd, "--deadline", c->deadline_s, "Seconds each rung may take per model in the probe before it is killed", deadline_seconds())
      ->capture_default_str();
  add_number(*cmd, "--build-deadline", c->build_deadline_s, "Seconds each engine's build may take before its worker is killed",
             knob_range<double>("build_deadline_ms", "seconds"))
      ->capture_default_str();
  c->plugins.add_to(*cmd);
  add_text(*cmd, "--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c] {
    int code = run_prepare(*c);
    if (code == kExitUsage) throw CliError(code, "a model's inputs were refused (see above)");
    if (code != kExitOk) throw CliError(code, "some models did not get the chosen rung's engine (see above)");
  });
}

}  // namespace rung::cli
