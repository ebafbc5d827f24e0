// `rung quantise` and `rung upgrade`: release-time forms, each written only
// with its proof.
#include <fmt/format.h>

#include <limits>
#include <memory>

#include "commands.h"
#include "json_output.h"
#include "model_args.h"
#include "numeric_args.h"
#include "progress.h"
#include "output_check.h"
#include "rung/path_text.h"
#include "runtime_args.h"
#include "rung/parity.h"
#include "rung/print.h"
#include "rung/quantise.h"

namespace rung::cli {
namespace {

// On a terminal: one line redrawn in place, a bar when the stage counts items.
void show_progress(const std::string& stage, std::size_t done, std::size_t total, const std::string& item) {
  if (total == 0) {
    show_progress_line(fmt::format("{}{}{}", stage, item.empty() ? "" : ": ", item));
    return;
  }
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = done * kWidth / total;
  show_progress_line(fmt::format("{} [{}{}] {}/{} {}", stage, std::string(filled, '#'), std::string(kWidth - filled, '.'), done, total, item));
}

// ONNX's default domain counts its opsets from 1; libonnx's converter says how far it goes.
const Range<std::int64_t> kOpsets{1, 1000};

struct SharedFlags {
  std::string ort, work_dir;
  RuntimeArgs runtime;
  double deadline_s = 600;
  int threads = 0;

  void add_to(CLI::App* cmd) {
    add_text(*cmd, "--ort", ort, "ONNX Runtime build to run on: a version found (1.30.0) or a directory or library; default: the chosen build");
    add_number(*cmd, "--deadline", deadline_s, "Seconds a scoring side may take to build its session or run one input", deadline_seconds())
        ->capture_default_str();
    runtime.add_to(*cmd);
    add_text(*cmd, "--work-dir", work_dir, "Keep the intermediate files here (default: a temporary directory, removed)")->group("");
  }
  ReleaseToolSettings settings() const {
    ReleaseToolSettings s;
    s.runtime = ort;
    runtime.apply_to(s.runtimes);
    s.deadline = deadline_from_seconds(deadline_s);
    s.work_dir = work_dir;
    s.threads = threads;
    if (progress_on_terminal()) s.on_progress = show_progress;
    return s;
  }
};

void clear_progress(const ReleaseToolSettings& s) {
  if (s.on_progress) clear_progress_line();
}

struct QuantiseCli {
  QuantiseOptions o;
  std::string model, calibration, holdout, gate, out;
  JsonOutput json;  // --out-json FILE: the report's file (default: beside a written file); --json: on stdout
  SharedFlags shared;
};

void run_quantise_command(QuantiseCli& c, const std::string& command_line) {
  require_model_file("the model", c.model);
  {
    std::vector<NamedPath> inputs = {{"the model", c.model}, {"--gate", c.gate}, {"--calibration", c.calibration}, {"--holdout", c.holdout},
                                     {"--ort-dir", c.shared.runtime.ort_dir}};
    for (const auto& f : files_named_by_gate_file(c.gate)) inputs.push_back({"the gate file's " + f.filename().string(), f});
    // Without --out-json the report goes beside a written model: checked too.
    const NamedPath report = c.json.to_file() || c.out.empty() ? c.json.output()
                                                               : NamedPath{"the report", path_from_utf8(c.out).replace_extension(".report.json")};
    check_outputs_before_work({{"--out", path_from_utf8(c.out)}, report}, inputs);
    for (auto& s : rung_state()) inputs.push_back(std::move(s));
    check_output_directory_before_work({"--work-dir", path_from_utf8(c.shared.work_dir)}, inputs);
  }
  c.o.model = c.model;
  c.o.calibration_dir = c.calibration;
  c.o.holdout_dir = c.holdout;
  c.o.gate_file = c.gate;
  c.o.out = c.out;
  if (c.json.to_file()) c.o.report = c.json.file;  // written by the library, whatever the decision
  c.o.command_line = command_line;
  c.o.settings = c.shared.settings();
  auto outcome = run_quantise(c.o);
  clear_progress(c.o.settings);
  if (!outcome) throw CliError(outcome.error());
  if (c.json.on_stdout()) {
    rung::print("{}\n", outcome->json);
  } else {
    rung::print("{}", outcome->text);
    if (!outcome->report_file.empty()) rung::print("report    {}\n", outcome->report_file.string());
  }
  if (!outcome->passed) {
    throw CliError(kExitFailed, outcome->written ? "quantise: a gate failed; written anyway (--force)" : "quantise: a gate failed; nothing written");
  }
}

struct UpgradeCli {
  UpgradeOptions o;
  std::string model, out, inputs, gate, preprocess;
  SharedFlags shared;
  JsonOutput json;
};

// upgrade's document (schemas/upgrade.schema.json): what was asked, what the proof ran on, what it found.
nlohmann::json upgrade_json(const UpgradeCli& c, const UpgradeOutcome& u) {
  return {{"schema", "rung-upgrade"},
          {"schema_version", 1},
          {"model", c.o.model.string()},
          {"out", c.o.out.string()},
          {"opset", {{"from", u.from}, {"to", u.to}, {"asked", c.o.opset}}},
          {"proof",
           {{"inputs", c.o.inputs_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.o.inputs_dir.string())},
            {"random", c.o.inputs_dir.empty() ? nlohmann::json(c.o.random) : nlohmann::json(nullptr)},
            {"seed", c.o.seed},
            {"tolerance", "close"}}},
          {"proven", u.proven},
          {"failing_output", u.proven ? nlohmann::json(nullptr) : nlohmann::json(u.failing_output)},
          {"written", u.written}};
}

void run_upgrade_command(UpgradeCli& c) {
  require_model_file("the model", c.model);
  {
    std::vector<NamedPath> inputs = {{"the model", path_from_utf8(c.model)}, {"--inputs", path_from_utf8(c.inputs)}, {"--gate", path_from_utf8(c.gate)},
                                     {"--preprocess", path_from_utf8(c.preprocess)}, {"--ort-dir", path_from_utf8(c.shared.runtime.ort_dir)}};
    for (const auto& f : files_named_by_gate_file(c.gate)) inputs.push_back({"the gate file's " + f.filename().string(), f});
    check_outputs_before_work({{"--out", path_from_utf8(c.out)}, c.json.output()}, inputs);
    for (auto& s : rung_state()) inputs.push_back(std::move(s));
    check_output_directory_before_work({"--work-dir", path_from_utf8(c.shared.work_dir)}, inputs);
  }
  c.o.model = c.model;
  c.o.out = c.out;
  c.o.inputs_dir = c.inputs;
  c.o.gate_file = c.gate;
  c.o.preprocess_file = c.preprocess;
  if (c.o.inputs_dir.empty() && c.o.random == 0) c.o.random = 3;
  c.o.settings = c.shared.settings();
  auto outcome = run_upgrade(c.o);
  clear_progress(c.o.settings);
  if (!outcome) throw CliError(outcome.error());
  if (!c.json.on_stdout()) rung::print("{}", outcome->text);
  if (c.json.on_stdout() || c.json.to_file()) c.json.emit(upgrade_json(c, *outcome));
  if (!outcome->proven) throw CliError(kExitFailed, fmt::format("upgrade: output '{}' differs; nothing written", outcome->failing_output));
}

std::string joined_arguments(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

}  // namespace

void add_quantise_command(CLI::App& app, int argc, char** argv) {
  auto c = std::make_shared<QuantiseCli>();
  auto* cmd = app.add_subcommand("quantise", "Make a quantised form (int8, a16w8, a16w16 QDQ; w8 weights) calibrated on real inputs; write it only when the model's gates pass");
  cmd->footer(
      "Scored against the f32 model with the gate file's decision gates on a holdout set that shares no file (by content) with the "
      "calibration set, on ONNX Runtime's CPU: not the NPU's measurement.\n"
      "Exit: 0 written (every gate passed), 1 a gate failed (nothing written unless --force), 2 a usage or input error "
      "(an overlapping holdout among them), 3 no usable ONNX Runtime build.");
  add_text(*cmd, "model", c->model, "The f32 model file")->required();
  add_text(*cmd, "--form", c->o.form, "int8 (8-bit activations and weights), a16w8, a16w16, or w8 (int8 weights, float arithmetic: a quarter of the size, "
           "where integer kernels would be slower)")->capture_default_str();
  add_text(*cmd, "--calibration", c->calibration, "Calibration inputs: images (the gate file's preprocessing) or tensors (.pb, .npy)")->required();
  add_text(*cmd, "--holdout", c->holdout, "Scoring inputs, sharing no file with the calibration set")->required();
  add_text(*cmd, "--gate", c->gate, "The model's gate file (preprocessing, input values, decision gates)")->required();
  add_text(*cmd, "--target", c->o.target,
           "Whose integer kernels decide where QDQ goes: cpu (ONNX Runtime's CPU; the default for int8 and w8) or npu (every op quantised; the "
           "default for 16-bit forms)");
  add_text(*cmd, "--calibrator", c->o.calibrator, "minmax, percentile=P (e.g. percentile=99.999) or entropy")->capture_default_str();
  cmd->add_flag("--signed-activations", c->o.signed_activations, "int8/int16 activations instead of uint8/uint16");
  cmd->add_flag("--per-tensor", c->o.per_tensor, "One weight scale per tensor instead of one per output channel");
  cmd->add_flag("--reduce-range", c->o.reduce_range,
                "8-bit weights in 7 bits: x86 CPUs without VNNI saturate uint8 x int8 sums, so a CPU-scored full-range form reads worse than it is");
  add_text(*cmd, "--keep-float", c->o.keep_float, "A node name or op type that stays float (repeatable)");
  add_text(*cmd, "--float-from", c->o.float_from, "A tensor whose consumers, and everything downstream, stay float (repeatable)");
  add_number(*cmd, "--opset", c->o.opset, "The opset a model below 13 is upgraded to (proven the same first)", kOpsets)->capture_default_str();
  add_text(*cmd, "--name", c->o.name, "The model's name in its id (default: the file's stem)");
  add_text(*cmd, "--out", c->out, "The quantised file (default: NAME_FORM.onnx here)");
  c->json.add_to(*cmd, "the report");
  cmd->get_option("--out-json")
      ->description("Write the JSON report to FILE, whatever the decision ('-': stdout, as --json). Default: beside a written file, OUT with .report.json");
  cmd->add_flag("--search", c->o.search,
                "When the gate fails: try the other calibrators, then keep float the fewest of the nodes that add the most error (measured "
                "against the float graph) that make the gate pass; the islands found are written into the recipe");
  add_number(*cmd, "--speed-runs", c->o.speed_runs,
             "Timed runs of the f32 file and the form, in turns on one calibration input, each profiled: the report's time in conversions, "
             "integer kernels and float islands (0: not timed)",
             {0, 1000, "runs"})
      ->capture_default_str();
  cmd->add_flag("--allow-slower", c->o.allow_slower,
                "Write an int8 or w8 form placed for the CPU even when its timed runs show it slower than f32 there (by default that fails like a gate)");
  cmd->add_flag("--force", c->o.force, "Write the file even when a gate fails (the failing report beside it; exit 1)");
  add_number(*cmd, "--threads", c->shared.threads, "Intra-op threads for calibration (0: ONNX Runtime's default)", thread_count())
      ->capture_default_str();
  c->shared.add_to(cmd);
  const std::string command_line = joined_arguments(argc, argv);
  cmd->callback([c, command_line] { run_quantise_command(*c, command_line); });
}

void add_upgrade_command(CLI::App& app) {
  auto c = std::make_shared<UpgradeCli>();
  auto* cmd = app.add_subcommand("upgrade", "Raise a model's opset with ONNX's version converter; write it only when proven to compute the same");
  cmd->footer(
      "The proof: the original and the upgraded graph side by side over the inputs, every output within Tolerance::close().\n"
      "Exit: 0 written, 1 not the same (the differing output named; nothing written), 2 a usage or input error, 3 no usable ONNX Runtime build.");
  add_text(*cmd, "model", c->model, "The model file")->required();
  add_number(*cmd, "--opset", c->o.opset, "The opset to reach", kOpsets)->capture_default_str();
  add_text(*cmd, "--out", c->out, "The upgraded file")->required();
  add_text(*cmd, "--inputs", c->inputs, "Inputs for the proof: tensors (.pb, .npy) or images (with --gate or --preprocess)");
  add_number(*cmd, "--random", c->o.random, "Seeded random inputs for the proof instead (default: 3 when no --inputs)",
             {1, kMaxRandomInputSets, "input sets"});
  add_number(*cmd, "--seed", c->o.seed, "Seed for random inputs", {0, std::numeric_limits<std::uint64_t>::max()})->capture_default_str();
  add_text(*cmd, "--gate", c->gate, "A gate file whose preprocessing and input values to use");
  add_text(*cmd, "--preprocess", c->preprocess, "Image preprocessing (JSON)");
  c->json.add_to(*cmd, "the outcome (schemas/upgrade.schema.json)");
  c->shared.add_to(cmd);
  cmd->callback([c] { run_upgrade_command(*c); });
}

}  // namespace rung::cli
