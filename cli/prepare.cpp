// `rung prepare`: start the engine as an application would, let the probe report
// and the engines land, then say where each model runs and what it computes.
#include <fmt/format.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "model_args.h"
#include "runtime_args.h"
#include "rung/engine.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

struct PrepareOptions {
  ModelArgs models;
  RuntimeArgs runtime;
  PluginArgs plugins;
  std::string cache_dir;
  std::string hardware_root = "/";
  std::string use_rung;
  double accept_ratio = 1.0;
  int threads = 0;
  bool in_process = false;
  bool json = false;
};

int run_prepare(const PrepareOptions& c) {
  EngineOptions o;
  o.cache_dir = c.cache_dir.empty() ? default_cache_dir() : fs::path(c.cache_dir);
  o.models = c.models.resolve();
  o.hardware_root = c.hardware_root;
  o.acceptance_ratio = c.accept_ratio;
  o.inference_threads = c.threads;
  o.isolate = !c.in_process;
  c.runtime.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  if (!c.use_rung.empty()) o.forced_rung = c.use_rung;
  // Each new progress line once, as an application's settings row would show it.
  auto last = std::make_shared<std::string>();
  auto mutex = std::make_shared<std::mutex>();
  o.on_progress = [last, mutex](const EngineProgress& p) {
    std::lock_guard lock(*mutex);
    std::string line = p.line();
    if (line != *last && !line.empty()) fmt::print(stderr, "{}\n", line);
    *last = line;
  };
  auto engine = Engine::start(o);
  if (!engine) throw CliError(engine.error());
  (*engine)->wait_until_settled();
  auto job = (*engine)->open_job();
  if (!job) throw CliError(kExitFailed, job.error().message);

  nlohmann::json models = nlohmann::json::array();
  std::vector<std::string> rows;
  int failures = 0;
  for (const auto& m : o.models) {
    auto s = (*job)->session(m.name);
    if (!s) {
      ++failures;
      models.push_back({{"model", m.name}, {"error", s.error().message}});
      rows.push_back(fmt::format("  {:<34} {:<14} {:<34} {}", m.name, "-", "-", s.error().message));
      continue;
    }
    models.push_back({{"model", m.name},
                      {"role", role_name(m.role)},
                      {"rung", (*s)->rung()},
                      {"model_id", (*s)->model_id()},
                      {"reason", (*s)->placement_reason()}});
    rows.push_back(fmt::format("  {:<34} {:<14} {:<34} {}", m.name, (*s)->rung(), (*s)->model_id(), (*s)->placement_reason()));
  }
  auto progress = (*engine)->progress();
  if (c.json) {
    nlohmann::json out = {{"about", (*engine)->about_line()},
                          {"rung", (*engine)->chosen_rung()},
                          {"reason", (*engine)->chosen_reason()},
                          {"inference_threads", (*engine)->inference_threads()},
                          {"engines", {{"total", progress.total}, {"landed", progress.landed}, {"failures", progress.failures}}},
                          {"models", models}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{}\n", (*engine)->about_line());
    fmt::print("rung: {} ({}); {} inference thread{}\n\n", (*engine)->chosen_rung(), (*engine)->chosen_reason(),
               (*engine)->inference_threads(), (*engine)->inference_threads() == 1 ? "" : "s");
    fmt::print("  {:<34} {:<14} {:<34} {}\n", "model", "rung", "model id", "why");
    for (const auto& r : rows) fmt::print("{}\n", r);
  }
  return failures == 0 && progress.failures.empty() ? kExitOk : kExitFailed;
}

}  // namespace

void add_prepare_command(CLI::App& app) {
  auto c = std::make_shared<PrepareOptions>();
  auto* cmd = app.add_subcommand("prepare", "Start the engine as an application does: probe, build engines, show each model's placement");
  c->models.add_to(*cmd);
  cmd->add_flag("--json", c->json, "Print the outcome as JSON");
  cmd->add_flag("--in-process", c->in_process, "Probe and build engines in this process instead of child processes");
  cmd->add_option("--threads", c->threads, "Inference threads (default: physical cores minus two, at least one)");
  cmd->add_option("--accept-ratio", c->accept_ratio, "Take a rung whose median is below the floor's times this")->capture_default_str();
  cmd->add_option("--use-rung", c->use_rung, "Force a rung at or below the chosen one (also RUNG_FORCE_RUNG)");
  cmd->add_option("--cache-dir", c->cache_dir, "Where the decision and the engines are cached (default: RUNG_CACHE_DIR or ~/.cache/rung/probe)");
  c->runtime.add_to(*cmd);
  c->plugins.add_to(*cmd);
  cmd->add_option("--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c] {
    int code = run_prepare(*c);
    if (code != kExitOk) throw CliError(code, "some models did not get the chosen rung's engine (see above)");
  });
}

}  // namespace rung::cli
