// `rung parity`: one model on two sides over the same inputs, gated on the
// decisions the product makes with its outputs.
#include <fmt/format.h>

#include <limits>
#include <memory>

#include "commands.h"
#include "json_output.h"
#include "model_args.h"
#include "numeric_args.h"
#include "progress.h"
#include "output_check.h"
#include "runtime_args.h"
#include "rung/parity.h"
#include "rung/print.h"

namespace rung::cli {
namespace {

struct ParityCliOptions {
  std::string ref, cand, inputs, gate, preprocess, work_dir, input_spec, record;
  JsonOutput json;
  bool show = false;
  RuntimeArgs runtime;
  WorkerArgs workers;
  PluginArgs plugins;
  SoftwareGpuArgs software_gpu;
  std::size_t random = 0;
  std::uint64_t seed = 0;
  double deadline_s = 300;
  std::uint64_t max_tensor_mb = 0;
};

// FILE, or NAME=FILE where NAME is the reference model's (its file name without .onnx), as other commands take it.
InputSpec read_input_spec(const std::string& arg, const std::filesystem::path& model) {
  std::string file = arg;
  if (const auto eq = arg.find('='); eq != std::string::npos) {
    const std::string name = arg.substr(0, eq);
    if (name != model.stem().string()) {
      throw CliError(kExitUsage, fmt::format("--input-spec {}: '{}' is not the model's name ({})", arg, name, model.stem().string()));
    }
    file = arg.substr(eq + 1);
  }
  auto spec = InputSpec::from_json_file(file);
  if (!spec) throw CliError(kExitUsage, fmt::format("--input-spec {}: {}", arg, spec.error().message));
  return *spec;
}

void run_parity_command(const ParityCliOptions& c) {
  ParityOptions o;
  const bool recording = !c.record.empty();
  if (recording == !c.cand.empty()) {
    throw CliError(kExitUsage, recording ? "--record DIR runs the ref side alone: give no --cand"
                                         : "give --cand SPEC (the side to compare), or --record DIR (store the ref side to compare elsewhere)");
  }
  auto ref = ParitySide::parse(c.ref);
  if (!ref) throw CliError(kExitUsage, fmt::format("--ref {}", ref.error().message));
  o.ref = *ref;
  if (recording && o.ref.stored()) throw CliError(kExitUsage, "--record: the ref side must run a model (expected:DIR is already a recording)");
  if (!recording) {
    auto cand = ParitySide::parse(c.cand);
    if (!cand) throw CliError(kExitUsage, fmt::format("--cand {}", cand.error().message));
    o.cand = *cand;
  }
  o.record_dir = c.record;
  // A side's model that cannot be read is named before anything else happens.
  if (!o.ref.stored()) require_model_file("--ref", o.ref.model);
  if (!recording && !o.cand.stored()) require_model_file("--cand", o.cand.model);
  c.software_gpu.apply();
  o.inputs_dir = c.inputs;
  o.random = c.random;
  o.seed = c.seed;
  o.gate_file = c.gate;
  o.preprocess_file = c.preprocess;
  o.work_dir = c.work_dir;
  if (c.max_tensor_mb > 0) o.max_tensor_bytes = c.max_tensor_mb << 20;
  o.show = c.show;
  if (!c.input_spec.empty()) o.input_spec = read_input_spec(c.input_spec, o.ref.model);
  c.runtime.apply_to(o.runtimes);
  c.plugins.apply_to(o.runtimes);
  o.deadline = deadline_from_seconds(c.deadline_s);
  o.worker_memory_limit_mb = c.workers.memory_mb;
  // The report may not be an input: a side's model, stored outputs, plugin or runtime, the inputs, the gate file, a spec.
  {
    std::vector<NamedPath> inputs;
    for (const auto& [role, side] : {std::pair<std::string, const ParitySide*>{"--ref", &o.ref}, {"--cand", &o.cand}}) {
      inputs.push_back({role + " model", side->model});
      inputs.push_back({role + " expected:", side->expected});
      inputs.push_back({role + " rung=", side->rung.find('/') != std::string::npos ? side->rung : ""});
      inputs.push_back({role + " ort=", side->runtime.find('/') != std::string::npos ? side->runtime : ""});
    }
    inputs.push_back({"--inputs", c.inputs});
    inputs.push_back({"--gate", c.gate});
    for (const auto& f : files_named_by_gate_file(c.gate)) inputs.push_back({"the gate file's character list", f});
    inputs.push_back({"--preprocess", c.preprocess});
    inputs.push_back({"--input-spec", file_of_assignment(c.input_spec)});
    inputs.push_back({"--ort-dir", c.runtime.ort_dir});
    check_outputs_before_work({c.json.output()}, inputs);
    for (auto& s : rung_state()) inputs.push_back(std::move(s));
    check_output_directory_before_work({"--work-dir", c.work_dir}, inputs);
  }
  const bool terminal = progress_on_terminal();
  if (terminal) o.on_progress = [](const std::string& line) { show_progress_line("parity: " + line); };
  if (recording) {
    auto made = record_parity_side(o);
    if (terminal) clear_progress_line();
    if (!made) throw CliError(made.error());
    const std::string line = fmt::format("recorded {} input set{} into {}: {}\n"
                                         "compare on another machine: rung parity --ref expected:{} --inputs {} --cand MODEL[,rung=...]\n",
                                         made->input_sets, made->input_sets == 1 ? "" : "s", c.record, made->describe(), c.record, c.record);
    if (!c.json.on_stdout()) rung::print("{}", line);
    if (c.json.on_stdout() || c.json.to_file()) c.json.emit_text(made->to_json());
    return;
  }
  auto report = run_parity(o);
  if (terminal) clear_progress_line();
  if (!report) throw CliError(report.error());
  if (!c.json.on_stdout()) rung::print("{}", report->text());
  if (c.json.on_stdout() || c.json.to_file()) c.json.emit_text(report->to_json());
  if (!report->passed()) throw CliError(kExitFailed, "parity: a gate failed (see above)");
}

}  // namespace

void add_parity_command(CLI::App& app) {
  auto c = std::make_shared<ParityCliOptions>();
  auto* cmd = app.add_subcommand("parity", "Run one model on two sides over the same inputs; gate on the decisions it makes, not only on tensors");
  cmd->footer(
      "SPEC: MODEL[,rung=cpu|cuda|...|/PATH/TO/PLUGIN-LIBRARY][,ort=VERSION|DIR][,threads=N][,option.KEY=VALUE]\n"
      "   or expected:DIR  (stored outputs: DIR/SET/output_K.pb for each input set SET, as an ONNX test folder holds them)\n"
      "  e.g. --ref det.onnx,ort=1.30.0 --cand det.onnx,ort=1.28.2\n"
      "       --ref expected:test_abs --cand test_abs/model.onnx --inputs test_abs\n"
      "       --ref cls.onnx --random 8 --record arm-side   (then elsewhere: --ref expected:arm-side --inputs arm-side --cand cls.onnx)\n"
      "Exit: 0 every gate passes, 1 a gate fails (or a side could not run), 2 a usage or input error, 3 no such ONNX Runtime build.");
  add_text(*cmd, "--ref", c->ref, "The reference side (SPEC)")->required();
  add_text(*cmd, "--cand", c->cand, "The candidate side (SPEC)");
  add_text(*cmd, "--record", c->record,
           "Instead of --cand: run the ref side alone and store its inputs and outputs in DIR (new), to compare on another machine");
  add_text(*cmd, "--inputs", c->inputs, "A directory of tensors (.pb, .npy, or a subdirectory of them per input set) or of images");
  add_number(*cmd, "--random", c->random, "Use N seeded random input sets instead of --inputs", {1, kMaxRandomInputSets, "input sets"});
  add_number(*cmd, "--seed", c->seed, "Seed for random inputs", {0, std::numeric_limits<std::uint64_t>::max()})->capture_default_str();
  add_text(*cmd, "--gate", c->gate, "Gate file (JSON: decoders, operating points, bounds, outputs; preprocessing). Default: the tensor gate");
  add_text(*cmd, "--preprocess", c->preprocess, "Image preprocessing (JSON) when the gate file declares none");
  c->json.add_to(*cmd, "the report");
  add_text(*cmd, "--input-spec", c->input_spec, "FILE or NAME=FILE: dims and values for the model's inputs (JSON, as probe and bench take)");
  cmd->add_flag("--show", c->show, "Print both sides' decoded decisions for every input (text lines, boxes)");
  add_number(*cmd, "--deadline", c->deadline_s, "Seconds a side may take to build its session or run one input", deadline_seconds())
      ->capture_default_str();
  c->runtime.add_to(*cmd);
  c->workers.add_to(*cmd);
  add_max_tensor_option(*cmd, c->max_tensor_mb);
  c->plugins.add_allow_to(*cmd);
  c->software_gpu.add_to(*cmd);
  add_text(*cmd, "--work-dir", c->work_dir, "Keep the exchanged tensors here (default: a temporary directory, removed)")->group("");
  cmd->callback([c] { run_parity_command(*c); });
}

}  // namespace rung::cli
