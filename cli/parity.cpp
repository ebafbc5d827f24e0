// `rung parity`: one model on two sides over the same inputs, gated on the
// decisions the product makes with its outputs.
#include <fmt/format.h>
#include <unistd.h>

#include <memory>

#include "commands.h"
#include "model_args.h"
#include "numeric_args.h"
#include "runtime_args.h"
#include "rung/parity.h"

namespace rung::cli {
namespace {

struct ParityCliOptions {
  std::string ref, cand, inputs, gate, preprocess, json, work_dir, input_spec;
  bool show = false;
  RuntimeArgs runtime;
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
  c.software_gpu.apply();
  ParityOptions o;
  auto ref = ParitySide::parse(c.ref);
  if (!ref) throw CliError(kExitUsage, fmt::format("--ref {}", ref.error().message));
  auto cand = ParitySide::parse(c.cand);
  if (!cand) throw CliError(kExitUsage, fmt::format("--cand {}", cand.error().message));
  o.ref = *ref;
  o.cand = *cand;
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
  o.deadline = std::chrono::milliseconds(static_cast<long long>(c.deadline_s * 1000));
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal) o.on_progress = [](const std::string& line) { fmt::print(stderr, "\r\033[Kparity: {}", line); };
  auto report = run_parity(o);
  if (terminal) fmt::print(stderr, "\r\033[K");
  if (!report) throw CliError(report.error());
  fmt::print("{}", report->text());
  if (!c.json.empty()) {
    if (auto s = report->write_json(c.json); !s) throw CliError(s.error());
  }
  if (!report->passed()) throw CliError(kExitFailed, "parity: a gate failed (see above)");
}

}  // namespace

void add_parity_command(CLI::App& app) {
  auto c = std::make_shared<ParityCliOptions>();
  auto* cmd = app.add_subcommand("parity", "Run one model on two sides over the same inputs; gate on the decisions it makes, not only on tensors");
  cmd->footer(
      "SPEC: MODEL[,rung=cpu|cuda|...|PLUGIN.so][,ort=VERSION|DIR][,threads=N][,option.KEY=VALUE]\n"
      "   or expected:DIR  (stored outputs: DIR/SET/output_K.pb for each input set SET, as an ONNX test folder holds them)\n"
      "  e.g. --ref det.onnx,ort=1.30.0 --cand det.onnx,ort=1.28.2\n"
      "       --ref expected:test_abs --cand test_abs/model.onnx --inputs test_abs\n"
      "Exit: 0 every gate passes, 1 a gate fails (or a side could not run), 2 a usage or input error, 3 no such ONNX Runtime build.");
  cmd->add_option("--ref", c->ref, "The reference side (SPEC)")->required();
  cmd->add_option("--cand", c->cand, "The candidate side (SPEC)")->required();
  cmd->add_option("--inputs", c->inputs, "A directory of tensors (.pb, .npy, or a subdirectory of them per input set) or of images");
  cmd->add_option("--random", c->random, "Use N seeded random input sets instead of --inputs")->check(whole_within(1, 1'000'000));
  cmd->add_option("--seed", c->seed, "Seed for random inputs")->capture_default_str();
  cmd->add_option("--gate", c->gate, "Gate file (JSON: decoders, operating points, bounds, outputs; preprocessing). Default: the tensor gate");
  cmd->add_option("--preprocess", c->preprocess, "Image preprocessing (JSON) when the gate file declares none");
  cmd->add_option("--json", c->json, "Also write the report as JSON to this file");
  cmd->add_option("--input-spec", c->input_spec, "FILE or NAME=FILE: dims and values for the model's inputs (JSON, as probe and bench take)");
  cmd->add_flag("--show", c->show, "Print both sides' decoded decisions for every input (text lines, boxes)");
  cmd->add_option("--deadline", c->deadline_s, "Seconds a side may take to build its session or run one input")
      ->check(finite_within(kMinDeadlineSeconds, kMaxDeadlineSeconds, "seconds"))
      ->capture_default_str();
  c->runtime.add_to(*cmd);
  add_max_tensor_option(*cmd, c->max_tensor_mb);
  c->plugins.add_allow_to(*cmd);
  c->software_gpu.add_to(*cmd);
  cmd->add_option("--work-dir", c->work_dir, "Keep the exchanged tensors here (default: a temporary directory, removed)")->group("");
  cmd->callback([c] { run_parity_command(*c); });
}

}  // namespace rung::cli
