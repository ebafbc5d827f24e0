// `rung bench`: every model on every rung of this device, each in its own
// process; a table on stdout, a record per model (--json) and a page (--html).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "commands.h"
#include "numeric_args.h"
#include "model_args.h"
#include "output_check.h"
#include "runtime_args.h"
#include "rung/bench.h"
#include "rung/bench_html.h"
#include "rung/bench_record.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

struct BenchCliOptions {
  std::vector<std::string> models;       // PATH or NAME=PATH
  std::vector<std::string> rungs;
  std::vector<std::string> input_specs;  // NAME=FILE
  std::uint64_t max_tensor_mb = 0;
  RuntimeArgs runtime;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  std::string input = "random";          // random | zeros | DIR
  std::string json;
  std::string html;
  std::string hardware_root = "/";
  int warmup = 3;
  int runs = 30;
  double duration_s = 0;
  int rounds = 1;
  int threads = 0;
  double deadline_s = 900;
  bool compare_bare = false;
};

std::string ms(double v) { return v >= 100 ? fmt::format("{:.1f}", v) : v >= 1 ? fmt::format("{:.2f}", v) : fmt::format("{:.3f}", v); }
std::string ms(const std::optional<double>& v) { return v ? ms(*v) : "-"; }

// A number for a rung that computes something else carries a mark, never bare.
std::string marked(const BenchRow& r, const std::string& text) { return r.computes_something_else() ? "≠" + text : text; }

std::string verdict(const BenchRow& r) {
  switch (r.match) {
    case OutputMatch::kReference: return "reference (floor)";
    case OutputMatch::kMatch: return fmt::format("match (max abs {:.2g})", r.max_abs_diff);
    case OutputMatch::kMismatch: return "MISMATCH: " + r.match_detail;
    case OutputMatch::kNotCompared: return "not compared";
  }
  return "";
}

void print_report(const BenchReport& rep) {
  fmt::print("{} · ONNX Runtime {} · {} · threads {}\n", rep.hostname, rep.runtime_version, rep.cpu,
             rep.settings.threads == 0 ? std::string("default") : std::to_string(rep.settings.threads));
  fmt::print("{} warm-up, {}, {} round{}; inputs {}; times in ms\n", rep.settings.warmup,
             rep.settings.duration_s > 0 ? fmt::format("runs for {:g} s", rep.settings.duration_s) : fmt::format("{} runs", rep.settings.runs),
             rep.settings.rounds, rep.settings.rounds == 1 ? "" : "s", rep.inputs_mode);
  bool any_else = false;
  for (const auto& m : rep.models) {
    fmt::print("\n{} ({}, {}, sha256 {}) · inputs {}\n", m.model_id, m.path.filename().string(), m.form, m.sha256.substr(0, 12),
               m.inputs_described);
    std::size_t rw = 4, iw = 8;
    for (const auto& r : m.rows) {
      rw = std::max(rw, r.display.size() + (r.match == OutputMatch::kReference ? 8 : 0));
      iw = std::max(iw, r.model_id.size());
    }
    fmt::print("  {:<{}} {:<{}} {:>17} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>9} {:>8} {:>7}  {}\n", "rung", rw, "model id",
               iw, "build cold/cached", "first", "min", "p50", "p90", "p99", "max", "mean", "cv", "inf/s", "peak MiB", "x floor",
               "output vs CPU");
    for (const auto& r : m.rows) {
      std::string name = r.match == OutputMatch::kReference ? r.display + " (floor)" : r.display;
      if (!r.ok) {
        fmt::print("  {:<{}} {:<{}} failed ({}): {}\n", name, rw, r.model_id, iw, r.failure_class, r.failure_reason);
        continue;
      }
      any_else = any_else || r.computes_something_else();
      const auto& l = r.latency;
      fmt::print("  {:<{}} {:<{}} {:>17} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5.1f}% {:>9} {:>8.0f} {:>7}  {}\n", name, rw, r.model_id, iw,
                 ms(r.build_cold_ms) + " / " + ms(r.build_cached_ms), ms(r.first_run_ms), marked(r, ms(l.min)),
                 marked(r, ms(l.p50)), marked(r, ms(l.p90)), marked(r, ms(l.p99)), marked(r, ms(l.max)), marked(r, ms(l.mean)),
                 l.cv * 100, marked(r, fmt::format("{:.1f}", r.throughput_per_s)), r.peak_rss_mb,
                 r.ratio_to_floor ? marked(r, fmt::format("{:.2f}", *r.ratio_to_floor)) : "-", verdict(r));
      for (const auto& e : r.evidence) fmt::print("  {:<{}} · {}\n", "", rw, e);
    }
  }
  if (any_else) fmt::print("\n≠: the rung's outputs differ from the CPU's; its numbers are for something else.\n");
}

int run_bench_command(const BenchCliOptions& c) {
  if (c.models.empty()) throw CliError(kExitUsage, "give at least one MODEL (PATH or NAME=PATH)");
  c.software_gpu.apply();
  BenchOptions o;
  o.warmup = c.warmup;
  o.runs = c.runs;
  o.duration_s = c.duration_s;
  o.rounds = c.rounds;
  o.threads = c.threads;
  o.compare_bare = c.compare_bare;
  o.rungs = c.rungs;
  o.hardware_root = c.hardware_root;
  o.deadline = deadline_from_seconds(c.deadline_s);
  c.runtime.apply_to(o.runtimes);
  c.plugins.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  if (c.input == "zeros") {
    o.zero_inputs = true;
  } else if (c.input != "random") {
    o.input_dir = c.input;
  }

  // Names (PATH or NAME=PATH), duplicates and --input-spec as every command reads them.
  ModelArgs args;
  args.models = c.models;
  args.input_specs = c.input_specs;
  args.max_tensor_mb = c.max_tensor_mb;
  for (auto& r : args.resolve()) o.models.push_back(BenchModel{r.name, r.f32, r.inputs});

  // Where the records go, and that each can be written or appended to, before anything is measured.
  std::vector<fs::path> record_files;
  if (!c.json.empty()) {
    std::vector<std::string> names;
    for (const auto& m : o.models) names.push_back(m.name);
    auto paths = bench_record_paths(c.json, names);
    if (!paths) throw CliError(kExitUsage, paths.error().message);
    record_files = *paths;
  }
  // No output may be an input (a model, a recorded input, a spec), another output or a directory.
  {
    std::vector<NamedPath> outputs, inputs;
    for (const auto& f : record_files) outputs.push_back({"--json", f, true});  // a record's directory is made when missing
    outputs.push_back({"--html", c.html});
    for (const auto& m : o.models) inputs.push_back({"the model " + m.name, m.path});
    inputs.push_back({"--input", o.input_dir});
    for (const auto& s : c.input_specs) inputs.push_back({"--input-spec", file_of_assignment(s)});
    for (const auto& d : c.plugins.dirs) inputs.push_back({"--plugin-dir", d});
    inputs.push_back({"--ort-dir", c.runtime.ort_dir});
    check_outputs_before_work(outputs, inputs);
  }
  if (!record_files.empty()) {
    const auto& paths = record_files;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (auto s = check_bench_record_target(paths[i], o.models[i].path); !s) {
        throw CliError(kExitUsage, fmt::format("--json: {}", s.error().message));
      }
    }
  }

  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) {
    const int rounds = o.rounds;
    o.on_progress = [rounds](const std::string& model, const std::string& rung, int round, int done, int total) {
      std::string runs = total > 0 ? fmt::format("{}/{} runs", done, total) : fmt::format("{} runs", done);
      std::string r = rounds > 1 ? fmt::format(" · round {}/{}", round + 1, rounds) : "";
      fmt::print(stderr, "\r\033[Kbench {} · {}{} · {}", model, rung, r, runs);
    };
  }
  auto result = run_bench(o);
  if (terminal) fmt::print(stderr, "\r\033[K");
  if (!result) throw CliError(result.error());
  const std::string command = command_line();
  print_report(*result);
  for (const auto& w : result->warnings) fmt::print(stderr, "rung: warning: {}\n", w);
  if (!record_files.empty()) {
    if (auto s = write_bench_records(*result, record_files, command); !s) throw CliError(kExitFailed, s.error().message);
    for (const auto& f : record_files) fmt::print("record: {}\n", f.string());
  }
  if (!c.html.empty()) {
    if (auto s = write_bench_html(c.html, *result, command); !s) throw CliError(kExitFailed, s.error().message);
    fmt::print("report: {}\n", c.html);
  }
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto c = std::make_shared<BenchCliOptions>();
  auto* cmd = app.add_subcommand("bench", "Measure each model on each rung of this device, each rung in its own process");
  add_text(*cmd, "models", c->models, "Model files: PATH or NAME=PATH")->required();
  add_text(*cmd, "--rung", c->rungs, "Measure this rung (repeatable; default: the whole ladder). The CPU always runs: it is the floor and the reference");
  add_number(*cmd, "--warmup", c->warmup, "Untimed runs after the first inference", {0, 1'000'000})->capture_default_str();
  auto* runs = add_number(*cmd, "--runs", c->runs, "Timed runs per rung and round", {1, 1'000'000})->capture_default_str();
  auto* duration = add_number(*cmd, "--duration", c->duration_s, "Time runs for this many seconds per rung and round, instead of --runs",
                              {0.001, 3600, "seconds"});
  runs->excludes(duration);
  add_number(*cmd, "--rounds", c->rounds, "Measure every rung this many times, the order rotated each round", {1, 1000})->capture_default_str();
  add_number(*cmd, "--threads", c->threads, "Intra-op threads per session (0: ONNX Runtime's default)", thread_count())->capture_default_str();
  add_text(*cmd, "--input", c->input, "random, zeros, or a directory of .pb tensors named after the inputs")->capture_default_str();
  add_text(*cmd, "--input-spec", c->input_specs, "NAME=FILE: how to feed a model (JSON with dims, values, tensors)");
  add_max_tensor_option(*cmd, c->max_tensor_mb);
  add_text(*cmd, "--json", c->json, "Write one record per model here (a file for one model, a directory for several); appends to an existing record");
  add_text(*cmd, "--html", c->html, "Write a self-contained HTML report here");
  cmd->add_flag("--compare-bare", c->compare_bare, "On the CPU rung, interleave a bare OrtApi::Run loop and report rung's p50 against it");
  add_number(*cmd, "--deadline", c->deadline_s, "Seconds a rung may take per model and round before it is killed", deadline_seconds())
      ->capture_default_str();
  c->runtime.add_to(*cmd);
  c->plugins.add_to(*cmd);
  c->software_gpu.add_to(*cmd);
  add_text(*cmd, "--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  cmd->callback([c] {
    int code = run_bench_command(*c);
    if (code != kExitOk) throw CliError(code, "bench failed");
  });
}

}  // namespace rung::cli
