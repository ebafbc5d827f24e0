// `rung bench`: every model on every rung of this device, each in its own
// process; a table on stdout, a record per model (--out-json), the records on
// stdout (--json), a table (--csv) and a page (--html). Files given one name are
// forms of one model, shown once.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "numeric_args.h"
#include "progress.h"
#include "model_args.h"
#include "output_check.h"
#include "runtime_args.h"
#include "rung/bench.h"
#include "rung/bench_html.h"
#include "rung/bench_record.h"
#include "rung/output_paths.h"
#include "rung/print.h"
#include "rung/ratio_text.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;

struct BenchCliOptions {
  std::vector<std::string> models;       // PATH, NAME=PATH or NAME:FORM=PATH
  std::vector<std::string> shapes;       // INPUT=1x3x640x640
  std::vector<std::string> rungs;
  std::vector<std::string> input_specs;  // NAME=FILE
  std::uint64_t max_tensor_mb = 0;
  RuntimeArgs runtime;
  WorkerArgs workers;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  std::string input = "random";          // random | zeros | DIR
  bool json = false;                     // the records on stdout, nothing else there
  std::string out_json;                  // FILE|DIR: records written (appended); "-": stdout
  std::string csv;
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

// "0.76× [0.71–0.80]", or "-".
std::string ratio_cell(const std::optional<PairedRatio>& p) { return p ? rung::ratio_cell(p->ratio, p->low, p->high) : "-"; }

// The probe's "placed": nodes the rung's provider ran, and their share of kernel time.
std::string placed_cell(const BenchRow& r) {
  return r.placement ? fmt::format("{}/{} {:.0f}%", r.placement->placed_nodes, r.placement->total_nodes, r.placement->time_share * 100) : "-";
}

// Display width: what the terminal shows (UTF-8 continuation bytes take no column).
std::size_t columns(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
std::string right(const std::string& s, std::size_t w) { return std::string(w > columns(s) ? w - columns(s) : 0, ' ') + s; }

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
  rung::print("{} · ONNX Runtime {} · {} · threads {}\n", rep.hostname, rep.runtime_version, rep.cpu,
             rep.settings.threads == 0 ? std::string("default") : std::to_string(rep.settings.threads));
  rung::print("{} warm-up, {}, {} round{}; inputs {}; times in ms\n", rep.settings.warmup,
             rep.settings.duration_s > 0 ? fmt::format("runs for {:g} s", rep.settings.duration_s) : fmt::format("{} runs", rep.settings.runs),
             rep.settings.rounds, rep.settings.rounds == 1 ? "" : "s", rep.inputs_mode);
  bool any_else = false, any_forms = false;
  for (const auto& m : rep.models) {
    any_forms = any_forms || m.forms.size() > 1;
    if (m.forms.size() <= 1) {
      rung::print("\n{} ({}, {}, sha256 {}) · inputs {}\n", m.model_id, m.path.filename().string(), m.form, m.sha256.substr(0, 12),
                 m.inputs_described);
    } else {
      rung::print("\n{} · {} forms\n", m.name, m.forms.size());
      for (const auto& f : m.forms) {
        rung::print("  {:<6} {} ({}, sha256 {}) · inputs {}\n", f.label, f.path.filename().string(), f.form, f.sha256.substr(0, 12), f.inputs_described);
      }
    }
    std::size_t rw = 4, fw = 4, iw = 8;
    for (const auto& r : m.rows) {
      rw = std::max(rw, r.display.size() + (r.match == OutputMatch::kReference ? 8 : 0));
      fw = std::max(fw, r.model_form.size());
      iw = std::max(iw, r.model_id.size());
    }
    rung::print("  {:<{}} {:<{}} {:<{}} {:>17} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>9} {:>8} {:>20} {:>20} {:>13}  {}\n", "rung", rw, "form", fw,
               "model id", iw, "build cold/cached", "first", "min", "p50", "p90", "p99", "cv", "inf/s", "peak MiB", "x floor [99%]",
               "x f32 [99%]", "placed", "output vs CPU");
    for (const auto& r : m.rows) {
      std::string name = r.match == OutputMatch::kReference ? r.display + " (floor)" : r.display;
      if (!r.ok) {
        rung::print("  {:<{}} {:<{}} {:<{}} failed ({}): {}\n", name, rw, r.model_form, fw, r.model_id, iw, r.failure_class, r.failure_reason);
        continue;
      }
      any_else = any_else || r.computes_something_else();
      const auto& l = r.latency;
      rung::print("  {:<{}} {:<{}} {:<{}} {:>17} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5.1f}% {:>9} {:>8.0f} {} {} {:>13}  {}\n", name, rw, r.model_form, fw,
                 r.model_id, iw, ms(r.build_cold_ms) + " / " + ms(r.build_cached_ms), ms(r.first_run_ms), marked(r, ms(l.min)),
                 marked(r, ms(l.p50)), marked(r, ms(l.p90)), marked(r, ms(l.p99)), l.cv * 100,
                 marked(r, fmt::format("{:.1f}", r.throughput_per_s)), r.peak_rss_mb, right(marked(r, ratio_cell(r.x_floor)), 20),
                 right(marked(r, ratio_cell(r.x_f32)), 20), placed_cell(r), verdict(r));
      for (const auto& e : r.evidence) rung::print("  {:<{}} · {}\n", "", rw, e);
    }
  }
  rung::print("\nx floor: the row's time over the CPU floor's, the same form. x f32: the form's time over the f32 form's on the same rung.\n"
             "Both: the median of paired run ratios (run k against run k of the same round) and its 99% sign-test interval, as the probe's speed rule.\n"
             "placed: nodes the rung's provider ran / all nodes, and their share of kernel time (ONNX Runtime's profile of one run).\n");
  if (any_forms) rung::print("Forms of one model: the files given one NAME (NAME=PATH, NAME:FORM=PATH, or NAME_FORM.onnx beside NAME).\n");
  if (any_else) rung::print("\n≠: the rung's outputs differ from the CPU's; its numbers are for something else.\n");
}

// One model file as given: PATH, NAME=PATH or NAME:FORM=PATH.
struct GivenModel {
  std::string arg, name, form;
  fs::path path;
};

std::string name_of_file(const fs::path& p) {
  std::string n = p.stem().string();
  for (char& c : n) {
    if (c == '-' || c == '.' || c == ' ') c = '_';
  }
  return n;
}

// The form labels a file name may end in: NAME_FORM.onnx, as `rung quantise` names its outputs.
bool known_form_suffix(const std::string& s) {
  for (const char* f : {"fp16", "fp32", "int8"}) {
    if (s == f) return true;
  }
  for (NumericForm f : kNumericForms) {
    if (s == numeric_form_name(f)) return true;
  }
  return false;
}

std::vector<GivenModel> parse_models(const std::vector<std::string>& args) {
  std::vector<GivenModel> out;
  for (const auto& a : args) {
    GivenModel g;
    g.arg = a;
    const auto eq = a.find('=');
    if (eq == std::string::npos) {
      g.path = a;
    } else {
      std::string name = a.substr(0, eq);
      g.path = a.substr(eq + 1);
      if (const auto colon = name.rfind(':'); colon != std::string::npos) {
        g.form = name.substr(colon + 1);
        name = name.substr(0, colon);
        if (g.form.empty() || g.form.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos) {
          throw CliError(kExitUsage, fmt::format("model {}: the form '{}' must be letters, digits, '_', '.' or '-' (NAME:FORM=PATH)", a, g.form));
        }
      }
      if (name.empty()) throw CliError(kExitUsage, fmt::format("model {}: no name before '=' (NAME=PATH or NAME:FORM=PATH)", a));
      g.name = name;
    }
    if (g.path.empty()) throw CliError(kExitUsage, fmt::format("model {}: no file after '='", a));
    if (g.path.extension() == ".json") {
      throw CliError(kExitUsage, fmt::format("model {}: a .json file is not a model; --json takes no value (it prints the records on stdout): "
                                             "write records to a file or directory with --out-json {}",
                                             a, g.path.string()));
    }
    out.push_back(std::move(g));
  }
  // A bare NAME_FORM.onnx beside a file named NAME is NAME's FORM form.
  for (auto& g : out) {
    if (!g.name.empty()) continue;
    const std::string stem = name_of_file(g.path);
    const auto us = stem.rfind('_');
    std::string base = us == std::string::npos ? "" : stem.substr(0, us), suffix = us == std::string::npos ? "" : stem.substr(us + 1);
    const bool beside = !base.empty() && known_form_suffix(suffix) && std::any_of(out.begin(), out.end(), [&](const GivenModel& o) {
      return &o != &g && (o.name == base || (o.name.empty() && name_of_file(o.path) == base));
    });
    if (beside) {
      g.name = base;
      g.form = suffix;
    }
  }
  for (auto& g : out) {
    if (g.name.empty()) g.name = name_of_file(g.path);
  }
  return out;
}

int run_bench_command(const BenchCliOptions& c) {
  if (c.models.empty()) throw CliError(kExitUsage, "give at least one MODEL (PATH, NAME=PATH or NAME:FORM=PATH)");
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
  o.worker_memory_limit_mb = c.workers.memory_mb;
  c.runtime.apply_to(o.runtimes);
  c.plugins.apply_to(o.runtimes);
  o.plugin_dirs = c.plugins.paths();
  if (c.input == "zeros") {
    o.zero_inputs = true;
  } else if (c.input != "random") {
    o.input_dir = c.input;
  }

  // Files of one name are forms of one model. Each model's first file is read
  // as every command reads models (--input-spec, specs/NAME.json); its other forms are fed alike.
  const auto given = parse_models(c.models);
  ModelArgs args;
  std::vector<std::string> firsts;
  for (const auto& g : given) {
    if (std::find(firsts.begin(), firsts.end(), g.name) != firsts.end()) continue;
    firsts.push_back(g.name);
    args.models.push_back(g.name + "=" + g.path.string());
  }
  // --input-spec NAME:FORM=FILE feeds that form alone (a form whose inputs differ); NAME=FILE every form of NAME.
  std::vector<std::pair<std::string, std::string>> form_specs;  // (NAME:FORM, FILE)
  for (const auto& spec : c.input_specs) {
    const auto eq = spec.find('=');
    const std::string key = eq == std::string::npos ? "" : spec.substr(0, eq);
    const bool of_a_form = std::any_of(given.begin(), given.end(), [&](const GivenModel& g) { return !g.form.empty() && key == g.name + ":" + g.form; });
    if (of_a_form) {
      form_specs.emplace_back(key, spec.substr(eq + 1));
    } else {
      args.input_specs.push_back(spec);
    }
  }
  args.max_tensor_mb = c.max_tensor_mb;
  const auto resolved = args.resolve();
  for (const auto& g : given) {
    auto r = std::find_if(resolved.begin(), resolved.end(), [&](const ModelRegistration& x) { return x.name == g.name; });
    require_model_file("model " + g.arg, g.path);
    InputSpec inputs = r->inputs;
    for (const auto& [key, file] : form_specs) {
      if (key != g.name + ":" + g.form) continue;
      auto spec = InputSpec::from_json_file(file);
      if (!spec) throw CliError(kExitUsage, fmt::format("--input-spec {}: {}", key, spec.error().message));
      inputs = *spec;
      if (c.max_tensor_mb > 0) inputs.max_tensor_bytes = c.max_tensor_mb << 20;
    }
    o.models.push_back(BenchModel{g.name, fs::absolute(g.path), inputs, g.form});
  }
  for (const auto& text : c.shapes) {
    auto shape = parse_input_shape(text);
    if (!shape) throw CliError(kExitUsage, shape.error().message);
    o.shapes.push_back(*shape);
  }
  std::vector<std::string> names;  // one per model, in order
  for (const auto& m : o.models) {
    if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
  }

  // Where the records go, and that each can be written or appended to, before anything is measured.
  std::vector<fs::path> record_files;
  const bool json_stdout = c.json || c.out_json == "-";
  if (!c.out_json.empty() && c.out_json != "-") {
    auto paths = bench_record_paths(c.out_json, names);
    if (!paths) throw CliError(kExitUsage, paths.error().message);
    record_files = *paths;
  }
  // No output may be an input (a model, a recorded input, a spec), another output or a directory.
  {
    std::vector<NamedPath> outputs, inputs;
    for (const auto& f : record_files) outputs.push_back({"--out-json", f, true});  // a record's directory is made when missing
    outputs.push_back({"--html", c.html});
    outputs.push_back({"--csv", c.csv});
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
      // The record names its model by one of its forms' files: any of them may be the one an existing record holds.
      Status first;
      bool fits = false;
      for (const auto& m : o.models) {
        if (m.name != names[i]) continue;
        auto s = check_bench_record_target(paths[i], m.path);
        if (s) {
          fits = true;
          break;
        }
        if (first) first = s;
      }
      if (!fits) throw CliError(kExitUsage, fmt::format("--out-json: {}", first.error().message));
    }
  }

  const bool terminal = progress_on_terminal();
  if (terminal) {
    const int rounds = o.rounds;
    o.on_progress = [rounds](const std::string& model, const std::string& rung, int round, int done, int total) {
      std::string runs = total > 0 ? fmt::format("{}/{} runs", done, total) : fmt::format("{} runs", done);
      std::string r = rounds > 1 ? fmt::format(" · round {}/{}", round + 1, rounds) : "";
      show_progress_line(fmt::format("bench {} · {}{} · {}", model, rung, r, runs));
    };
  }
  auto result = run_bench(o);
  if (terminal) clear_progress_line();
  if (!result) throw CliError(result.error());
  const std::string command = command_line();
  // With --json stdout carries the records and nothing else: the table and the files' names go to stderr.
  auto say = [&](const std::string& line) {
    if (json_stdout) {
      rung::print(stderr, "{}\n", line);
    } else {
      rung::print("{}\n", line);
    }
  };
  if (!json_stdout) print_report(*result);
  for (const auto& w : result->warnings) rung::print(stderr, "rung: warning: {}\n", w);
  if (!record_files.empty()) {
    if (auto s = write_bench_records(*result, record_files, command); !s) throw CliError(kExitFailed, s.error().message);
    for (const auto& f : record_files) say("record: " + f.string());
  }
  if (!c.csv.empty()) {
    if (auto s = write_output_file(c.csv, bench_csv(*result)); !s) throw CliError(kExitFailed, fmt::format("--csv {}: {}", c.csv, s.error().message));
    say("table: " + c.csv);
  }
  if (!c.html.empty()) {
    if (auto s = write_bench_html(c.html, *result, command); !s) throw CliError(kExitFailed, s.error().message);
    say("report: " + c.html);
  }
  if (json_stdout) rung::print("{}", bench_records_json(*result, command));
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto c = std::make_shared<BenchCliOptions>();
  auto* cmd = app.add_subcommand("bench", "Measure each model on each rung of this device, each rung in its own process");
  add_text(*cmd, "models", c->models,
           "Model files: PATH, NAME=PATH or NAME:FORM=PATH. Files given one NAME are forms of one model (det:f32=det.onnx det:i8=det_i8.onnx), "
           "shown once with one row per form and rung and a × f32 column; a bare NAME_FORM.onnx (FORM f16, i8, a16w8, a16w16, w8, ...) beside "
           "NAME.onnx joins it. A form without :FORM is named by the file's numeric form (f32, f16, i8, a16w8, a16w16, w8)")
      ->required();
  add_text(*cmd, "--rung", c->rungs, "Measure this rung (repeatable; default: the whole ladder). The CPU always runs: it is the floor and the reference");
  add_number(*cmd, "--warmup", c->warmup, "Untimed runs after the first inference", {0, 1'000'000, "runs"})->capture_default_str();
  auto* runs = add_number(*cmd, "--runs", c->runs, "Timed runs per rung and round", {1, 1'000'000, "runs"})->capture_default_str();
  auto* duration = add_number(*cmd, "--duration", c->duration_s, "Time runs for this many seconds per rung and round, instead of --runs",
                              {0.001, 3600, "seconds"});
  runs->excludes(duration);
  add_number(*cmd, "--rounds", c->rounds, "Measure every rung this many times, the order rotated each round", {1, 1000, "rounds"})->capture_default_str();
  add_number(*cmd, "--threads", c->threads, "Intra-op threads per session (0: ONNX Runtime's default)", thread_count())->capture_default_str();
  add_text(*cmd, "--input", c->input, "random, zeros, or a directory of .pb tensors named after the inputs")->capture_default_str();
  add_text(*cmd, "--input-spec", c->input_specs,
           "NAME=FILE: how to feed a model (JSON with dims, values, tensors), every form of it; NAME:FORM=FILE: that form alone");
  add_text(*cmd, "--shape", c->shapes,
           "INPUT=1x3x640x640: that input's whole shape, in every model that has it (repeatable; values as without it). "
           "Its rank must be the model's and fixed axes their own size");
  add_max_tensor_option(*cmd, c->max_tensor_mb);
  cmd->add_flag("--json", c->json, "Print the records on stdout and nothing else there (schemas/bench-records.schema.json: one per model under \"records\"); the table is not printed");
  add_text(*cmd, "--out-json", c->out_json,
           "Write one record per model here (a file for one model, a directory for several); appends to an existing record. '-': stdout, as --json");
  add_text(*cmd, "--csv", c->csv, "Write one row per model × form × rung here (RFC 4180, a header line first)");
  add_text(*cmd, "--html", c->html, "Write a self-contained HTML report here");
  cmd->add_flag("--compare-bare", c->compare_bare, "On the CPU rung, interleave a bare OrtApi::Run loop and report rung's p50 against it");
  add_number(*cmd, "--deadline", c->deadline_s, "Seconds a rung may take per model and round before it is killed", deadline_seconds())
      ->capture_default_str();
  c->runtime.add_to(*cmd);
  c->workers.add_to(*cmd);
  c->plugins.add_to(*cmd);
  c->software_gpu.add_to(*cmd);
  add_text(*cmd, "--hardware-root", c->hardware_root, "Read the hardware description under this directory (for testing)")->group("");
  add_bench_compare_command(*cmd);
  cmd->footer(
      "Columns: x floor is a row's time over the CPU floor's for the same form; x f32 is a form's time over the model's f32 form's on the "
      "same rung (none when the model has no f32 form). Each is the median of paired run ratios (run k of one row against run k of the "
      "other in the same round) with its 99% sign-test interval, computed as the probe's speed rule computes its ratio: 0.76× [0.71–0.80]. "
      "placed: nodes the rung's provider ran / all nodes and their share of kernel time, from ONNX Runtime's profile of one run.\n"
      "--csv has one row per model × form × rung: model, form, file, rung, rung_display, provider, build, model_id, ok, build_cold_ms, "
      "build_cached_ms, first_ms, p50_ms, p90_ms, p99_ms, cv, x_floor, x_floor_low, x_floor_high, x_f32, x_f32_low, x_f32_high, "
      "placed_nodes, total_nodes, placed_time_share, verdict, reason.");
  cmd->callback([c] {
    int code = run_bench_command(*c);
    if (code != kExitOk) throw CliError(code, "bench failed");
  });
}

}  // namespace rung::cli
