// `rung quantise` and `rung upgrade`: read and check everything first (a bad
// gate file or an overlapping holdout costs no model run), upgrade and prove,
// plan, calibrate, rewrite, score on the holdout, and write only what passed.
#include "rung/quantise.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <set>

#include "quantise/activation_fold.h"
#include "quantise/conv_fold.h"
#include "core/thread_limit.h"
#include "graph/model_file.h"
#include "graph/onnx_file.h"
#include "graph/model_write.h"
#include "quantise/island_search.h"
#include "quantise/opset_upgrade.h"
#include "quantise/speed.h"
#include "os/atomic_file.h"
#include "os/file_hash.h"
#include "os/utc_now.h"
#include "os/work_dir.h"
#include "parity/gate_file.h"
#include "parity/side.h"
#include "quantise/report.h"
#include "rung/hardware.h"
#include "rung/limits.h"
#include "rung/output_paths.h"
#include "runtime/resolver.h"
#include "session/session.h"
#include "os/regular_file.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// Per-channel weights in QuantizeLinear/DequantizeLinear arrived at opset 13.
constexpr std::int64_t kQdqOpset = 13;

// The scratch directory: the caller's (made when missing), or a fresh one removed at the end.
Result<WorkDir> open_workspace(const fs::path& given, const std::string& prefix) {
  if (!given.empty()) {
    std::error_code ec;
    fs::create_directories(given, ec);
    if (ec) return Error{ErrorCode::kIo, fmt::format("{}: {}", given.string(), ec.message())};
  }
  WorkDir work;
  RUNG_RETURN_IF_ERROR(work.open(given, prefix));
  return work;
}

ProofSides proof_sides(const ReleaseToolSettings& s, const ResolvedRuntime& rt) { return {rt.library, s.worker, s.deadline}; }

// The settings both commands share, checked before any work (the C++ API has no CLI in front).
Status check_settings(const ReleaseToolSettings& s) {
  RUNG_RETURN_IF_ERROR(check_deadline(s.deadline, "the deadline"));
  return check_thread_count(s.threads, "threads");
}

Status require_file(const fs::path& p, const char* what) {
  if (p.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("no {} given", what)};
  return check_regular_file(p);
}

std::string default_name(const fs::path& model) { return model.stem().string(); }

// What both commands read besides their own inputs: the build they run on, when named by path.
void add_runtime_inputs(const ReleaseToolSettings& s, std::vector<NamedPath>& inputs) {
  if (s.runtime.find('/') != std::string::npos) inputs.push_back({"--ort", s.runtime});
  if (s.runtimes.explicit_dir) inputs.push_back({"--ort-dir", *s.runtimes.explicit_dir});
}

// The reference's runtime, installed in this process for calibration.
Result<OrtProcess*> install_runtime(const ResolvedRuntime& rt, const RuntimeSearchOptions& search) {
  auto build = load_runtime_build(rt.library, search.allow_writable_by_others);
  if (!build) return Error{ErrorCode::kNoRuntime, build.error().message};
  return OrtProcess::install(*build);
}

void progress(const ReleaseToolSettings& s, const std::string& stage, std::size_t done, std::size_t total, const std::string& item) {
  if (s.on_progress) s.on_progress(stage, done, total, item);
}

ParityOptions scoring_options(const QuantiseOptions& o, const ResolvedRuntime& rt, const fs::path& candidate, const fs::path& work) {
  ParityOptions p;
  p.ref.model = o.model;
  p.cand.model = candidate;
  p.ref.runtime = p.cand.runtime = rt.library.string();
  p.inputs_dir = o.holdout_dir;
  p.gate_file = o.gate_file;
  p.worker = o.settings.worker;
  p.work_dir = work / "scoring";
  p.deadline = o.settings.deadline;
  p.on_progress = [&o](const std::string& line) { progress(o.settings, "scoring", 0, 0, line); };
  return p;
}

std::string failing_titles(const ParityReport& r, std::vector<std::string>& failed) {
  for (const auto& g : r.gates) {
    if (!g.passed) failed.push_back(g.title);
  }
  return fmt::format("{}", fmt::join(failed, ", "));
}

}  // namespace

Result<UpgradeOutcome> run_upgrade(const UpgradeOptions& o) {
  RUNG_RETURN_IF_ERROR(check_settings(o.settings));
  if (o.random > kMaxRandomInputSets) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} random input sets is out of range: at most {}", o.random, kMaxRandomInputSets)};
  }
  RUNG_RETURN_IF_ERROR(require_file(o.model, "model"));
  if (o.out.empty()) return Error{ErrorCode::kInvalidArgument, "no output file given (--out FILE)"};
  if (o.inputs_dir.empty() == (o.random == 0)) {
    return Error{ErrorCode::kInvalidArgument, "the proof needs inputs: give an input directory or a number of random inputs (one of them)"};
  }
  // Before any work: the upgraded file never replaces the model or anything else read.
  std::vector<NamedPath> inputs = {{"the model", o.model}, {"--inputs", o.inputs_dir}, {"--gate", o.gate_file}, {"--preprocess", o.preprocess_file}};
  add_runtime_inputs(o.settings, inputs);
  RUNG_RETURN_IF_ERROR(check_output_paths({{"--out", o.out}}, inputs));
  auto read = read_onnx_model(o.model);
  if (!read) return read.error();
  onnx::ModelProto& model = *read;
  UpgradeOutcome out;
  out.from = default_opset(model);
  out.to = o.opset;
  RuntimeResolver resolver(o.settings.runtimes);
  auto rt = resolver.resolve(o.settings.runtime);
  if (!rt) return rt.error();
  auto work = open_workspace(o.settings.work_dir, "rung-upgrade");
  if (!work) return work.error();
  auto upgraded = upgrade_opset(model, o.opset);
  if (!upgraded) return Error{upgraded.error().code, fmt::format("{}: {}", o.model.string(), upgraded.error().message)};
  const fs::path candidate = work->path() / "upgraded.onnx";
  RUNG_RETURN_IF_ERROR(write_onnx_model(model, candidate));
  progress(o.settings, "proving", 0, 0, "");
  auto proof = prove_same_computation(o.model, candidate, {o.inputs_dir, o.random, o.seed, o.gate_file, o.preprocess_file},
                                      proof_sides(o.settings, *rt), work->path() / "proof");
  if (!proof) return proof.error();
  out.proven = proof->proven;
  out.failing_output = proof->failing_output;
  out.text = fmt::format("upgrade {}: opset {} -> {} through ONNX's version converter\n\n{}\n", o.model.filename().string(), out.from, out.to,
                         proof->parity.text());
  if (!out.proven) {
    out.text += fmt::format("REFUSED: the upgraded graph does not compute the same (output '{}' differs); nothing written\n", out.failing_output);
    return out;
  }
  RUNG_RETURN_IF_ERROR(write_onnx_model(model, o.out));
  out.written = true;
  out.text += fmt::format("WRITTEN {} (opset {}), proven the same as {} on {} inputs\n", o.out.string(), out.to, o.model.filename().string(),
                          proof->parity.inputs);
  return out;
}

namespace {

// run_quantise's stages, in order, each handing the next what it made:
//   check_request    everything checked without running a model: options, outputs
//                    against inputs, the gate file, the calibration and holdout sets
//   read_source      the model, parsed once, and what the evidence records of it
//   open_runtime     the build resolved and installed in this process, the device
//   prepare_graph    opset, folds and rewrites, proven the same when anything changed
//   calibrate_once   the statistics every form reads
//   FormMaker        one form: planned, rewritten, written, read back, scored
//   search_forms     other calibrators, hard activations float, islands (--search)
//   adopt, decide    the chosen form's evidence, its speed, and what is written

struct QuantiseRequest {
  NumericForm form = NumericForm::kF32;
  fs::path out;
  fs::path report;
  GateFile gates;
  InputSet calibration;
  InputSet holdout;
  InputPlan plan;
};

Result<QuantiseRequest> check_request(const QuantiseOptions& o, QuantiseEvidence& ev) {
  RUNG_RETURN_IF_ERROR(check_settings(o.settings));
  RUNG_RETURN_IF_ERROR(require_file(o.model, "model"));
  RUNG_RETURN_IF_ERROR(require_file(o.gate_file, "gate file"));
  QuantiseRequest r;
  ev.created = utc_now();
  ev.command = o.command_line;
  ev.name = o.name.empty() ? default_name(o.model) : o.name;
  auto form = parse_quantised_form(o.form);
  if (!form) return form.error();
  r.form = *form;
  // Neither output replaces the model, the gate file, a calibration or holdout file, or the other.
  r.out = o.out.empty() ? fs::path(model_id(ev.name, r.form) + ".onnx") : o.out;
  r.report = !o.report.empty() ? o.report : fs::path(r.out).replace_extension(".report.json");
  const std::vector<NamedPath> outputs = {{"--out", r.out}, {"--report", r.report}};
  {
    std::vector<NamedPath> inputs = {{"the model", o.model}, {"--gate", o.gate_file}, {"--calibration", o.calibration_dir}, {"--holdout", o.holdout_dir}};
    add_runtime_inputs(o.settings, inputs);
    RUNG_RETURN_IF_ERROR(check_output_paths(outputs, inputs));
  }
  ev.qdq.form = r.form;
  ev.qdq.target = default_qdq_target(r.form);
  const bool w8 = weights_only(r.form);
  if (!o.target.empty()) {
    auto target = parse_qdq_target(o.target);
    if (!target) return Error{target.error().code, "--target: " + target.error().message};
    ev.qdq.target = *target;
    if (w8 && *target != QdqTarget::kCpu) {
      return Error{ErrorCode::kInvalidArgument, "--target: a w8 form computes in float, so no target's integer kernels place it; it is a CPU form"};
    }
  }
  if (w8 && (o.signed_activations || o.reduce_range)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a w8 form's arithmetic is float, which neither changes",
                                                          o.signed_activations ? "--signed-activations" : "--reduce-range")};
  }
  if (w8 && o.search) {
    return Error{ErrorCode::kInvalidArgument,
                 "--search: a w8 form quantises no activation, so there is no calibrator to try or quantised tensor to rank; --keep-float NODE "
                 "keeps a node's weights float"};
  }
  ev.qdq.signed_activations = o.signed_activations;
  ev.qdq.per_channel = !o.per_tensor;
  ev.qdq.reduce_range = o.reduce_range;
  ev.qdq.keep_float = o.keep_float;
  ev.qdq.float_from = o.float_from;
  auto calibrator = Calibrator::parse(o.calibrator);
  if (!calibrator) return calibrator.error();
  ev.calibrator = *calibrator;
  auto gates = read_gate_file(o.gate_file);
  if (!gates) return gates.error();
  r.gates = std::move(*gates);
  // The gate's own files (a character list) are inputs too, known once it is read.
  {
    std::vector<NamedPath> named;
    for (const auto& f : files_named_by(r.gates)) named.push_back({"the gate file's " + f.filename().string(), f});
    RUNG_RETURN_IF_ERROR(check_output_paths(outputs, named));
  }
  ev.gate_file = o.gate_file;
  if (auto h = sha256_of_file(o.gate_file); h) ev.gate_file_sha256 = *h;
  if (o.calibration_dir.empty() || o.holdout_dir.empty()) return Error{ErrorCode::kInvalidArgument, "give both a calibration and a holdout directory"};
  auto calibration = read_input_set(o.calibration_dir);
  if (!calibration) return Error{calibration.error().code, fmt::format("calibration set: {}", calibration.error().message)};
  auto holdout = read_input_set(o.holdout_dir);
  if (!holdout) return Error{holdout.error().code, fmt::format("holdout set: {}", holdout.error().message)};
  RUNG_RETURN_IF_ERROR(check_disjoint(*calibration, *holdout));
  r.calibration = std::move(*calibration);
  r.holdout = std::move(*holdout);
  r.plan = InputPlan{r.gates.preprocess, r.gates.image_input, r.gates.inputs, 0};
  return r;
}

// The model, parsed once: the graph every later stage works on, and its facts.
struct SourceModel {
  onnx::ModelProto model;
  ModelFileFacts facts;
};

Result<SourceModel> read_source(const QuantiseOptions& o, QuantiseEvidence& ev) {
  auto read = read_onnx_model(o.model);
  if (!read) return read.error();
  SourceModel s{std::move(*read), {}};
  auto facts = inspect_model(s.model, o.model);
  if (!facts) return facts.error();
  s.facts = std::move(*facts);
  if (s.facts.form != NumericForm::kF32) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: already a {} form ({}); quantise the f32 file", o.model.string(),
                                                          numeric_form_name(s.facts.form), s.facts.form_evidence)};
  }
  ev.source = o.model;
  ev.source_sha256 = s.facts.sha256;
  ev.source_stable_sha256 = s.facts.stable_sha256;
  ev.source_opset = s.facts.opset;
  ev.source_nodes = static_cast<std::size_t>(s.facts.nodes);
  return s;
}

struct QuantiseRuntime {
  ResolvedRuntime rt;
  OrtProcess* process = nullptr;
};

Result<QuantiseRuntime> open_runtime(const QuantiseOptions& o, QuantiseEvidence& ev) {
  RuntimeResolver resolver(o.settings.runtimes);
  auto rt = resolver.resolve(o.settings.runtime);
  if (!rt) return rt.error();
  ev.runtime_version = rt->version;
  ev.runtime_library = rt->library;
  const Hardware here = detect_hardware("/");
  ev.device = here.identity();
  ev.cpu_features = quantised_speed_features(here.cpu);
  auto process = install_runtime(*rt, o.settings.runtimes);
  if (!process) return process.error();
  return QuantiseRuntime{std::move(*rt), *process};
}

// The graph: constants lifted, shapes known, opset 13 or above, normalisations folded into
// their convolutions; proven the same as the original when anything changed. False when
// that proof failed (the evidence then says so and nothing is quantised).
Result<bool> prepare_graph(const QuantiseOptions& o, QuantiseEvidence& ev, onnx::ModelProto& prepared, std::int64_t source_opset,
                           const ResolvedRuntime& rt, const fs::path& work) {
  name_unnamed_nodes(*prepared.mutable_graph());
  const std::int64_t target = source_opset < kQdqOpset ? o.opset : source_opset;
  if (target < kQdqOpset) return Error{ErrorCode::kInvalidArgument, fmt::format("--opset {}: QDQ with per-channel weights needs opset {} or above", target, kQdqOpset)};
  auto upgraded = upgrade_opset(prepared, target);
  if (!upgraded) return Error{upgraded.error().code, fmt::format("{}: {}", o.model.string(), upgraded.error().message)};
  ev.opset = target;
  if (upgraded->to != upgraded->from) ev.upgraded_to = upgraded->to;
  // Activations first: a division that is part of a hard-swish must not be folded into a convolution before the pattern is seen.
  ev.activation_folds = fold_activations(*prepared.mutable_graph(), target);
  ev.conv_folds = fold_into_convolutions(*prepared.mutable_graph());
  const bool rewritten = ev.conv_folds.total() > 0 || ev.activation_folds.total() > 0;
  if (rewritten) {
    RUNG_RETURN_IF_ERROR(infer_shapes(prepared));
  }
  if (!ev.upgraded_to && !rewritten) return true;
  const fs::path file = work / "upgraded.onnx";
  RUNG_RETURN_IF_ERROR(write_onnx_model(prepared, file));
  progress(o.settings, "proving the upgrade", 0, 0, "");
  auto proof = prove_same_computation(o.model, file, {o.calibration_dir, 0, 0, o.gate_file, {}, rewritten}, proof_sides(o.settings, rt), work / "proof");
  if (!proof) return proof.error();
  ev.upgrade_proof = std::move(*proof);
  if (ev.upgrade_proof->proven) return true;
  ev.decision = "refused";
  ev.failed = {fmt::format("the prepared graph (opset upgrade, folds and rewrites): output '{}' differs", ev.upgrade_proof->failing_output)};
  return false;
}

// Calibrated once: a search keeps histograms so that every calibrator reads the same statistics.
Result<Calibration> calibrate_once(const QuantiseOptions& o, QuantiseEvidence& ev, const QuantiseRequest& r, const onnx::ModelProto& prepared,
                                   OrtProcess& process, const fs::path& work) {
  auto qdq_plan = plan_qdq(prepared, ev.qdq);
  if (!qdq_plan) return qdq_plan.error();
  if (qdq_plan->quantised.empty()) {
    const bool cpu = ev.qdq.target == QdqTarget::kCpu;
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: no node is left to quantise for the {} ({}){}", o.model.string(), qdq_target_name(ev.qdq.target),
                             cpu ? "none has an integer kernel there that pays for its conversions" : "islands keep every node float",
                             cpu ? "; --target npu quantises every op an NPU runs" : "")};
  }
  // A w8 form quantises no activation: nothing to observe (its calibration inputs correct its biases).
  if (weights_only(r.form)) {
    Calibration unobserved;
    unobserved.inputs = r.calibration.items.size();
    return unobserved;
  }
  CalibrationOptions co;
  co.tensors = qdq_plan->calibrated();
  if (o.search) {
    // A search's islands leave tensors without the range they shared, knew by construction or had folded away:
    // it observes every tensor any target's plan would convert.
    QdqSettings everything = ev.qdq;
    everything.target = QdqTarget::kNpu;
    auto wide = plan_qdq(prepared, everything);
    if (!wide) return wide.error();
    std::set<std::string> all(qdq_plan->activations.begin(), qdq_plan->activations.end());
    all.insert(wide->activations.begin(), wide->activations.end());
    co.tensors.assign(all.begin(), all.end());
  }
  co.items = r.calibration.items;
  co.plan = r.plan;
  co.calibrator = ev.calibrator;
  if (o.search && co.calibrator.histogram_bins() == 0) co.calibrator = *Calibrator::parse("entropy");
  co.threads = o.settings.threads;
  co.work_dir = work;
  co.on_progress = [&o](std::size_t done, std::size_t total, const std::string& item) { progress(o.settings, "calibrating", done, total, item); };
  return calibrate(process, prepared, co);
}

// One form: the plan with these islands, the ranges this calibrator reads, rewritten, checked and scored on the holdout.
struct Attempt {
  QdqSettings qdq;
  Calibrator calibrator;
  QdqPlan plan;
  QdqCounts counts;
  std::optional<BiasCorrection> bias;
  std::vector<MixedRangeHazard> hazards;
  std::string bytes;
  fs::path file;
  ModelFileFacts facts;  // read back from the written file
  ParityReport scored;
};

class FormMaker {
 public:
  FormMaker(const QuantiseOptions& o, const QuantiseEvidence& ev, const QuantiseRequest& r, const onnx::ModelProto& prepared,
            const Calibration& calibrated, const QuantiseRuntime& runtime, const fs::path& work)
      : o_(o), asked_(ev.qdq), r_(r), prepared_(prepared), calibrated_(calibrated), runtime_(runtime), work_(work) {}

  // kUnsupported when the islands leave nothing quantised: that is no form.
  Result<Attempt> make(const Calibrator& reading, const std::vector<std::string>& extra_float) {
    Attempt a;
    a.qdq = asked_;
    a.qdq.keep_float.insert(a.qdq.keep_float.end(), extra_float.begin(), extra_float.end());
    a.calibrator = reading;
    auto made = plan_qdq(prepared_, a.qdq);
    if (!made) return made.error();
    a.plan = std::move(*made);
    if (a.plan.quantised.empty()) return Error{ErrorCode::kUnsupported, "the islands leave no node quantised"};
    std::map<std::string, Range> observed;
    for (const auto& [name, stats] : calibrated_.stats) observed[name] = reading.range(stats, activation_bits(r_.form));
    auto ranges = a.plan.resolve(std::move(observed));
    if (!ranges) return ranges.error();
    a.hazards = find_mixed_ranges(prepared_, a.plan, *ranges, activation_bits(r_.form));
    onnx::ModelProto model = prepared_;
    auto counts = insert_qdq(model, a.plan, *ranges, a.qdq);
    if (!counts) return counts.error();
    if (weights_only(a.qdq.form)) {
      // Rounded weights shift each channel's mean output: measured node by node on the calibration inputs, taken off the biases.
      progress(o_.settings, "correcting biases", 0, 0, "");
      auto shifts = measure_rounding_shifts(*runtime_.process, prepared_, model, a.plan.quantised, r_.calibration.items, r_.plan,
                                            o_.settings.threads, work_);
      if (!shifts) return Error{shifts.error().code, fmt::format("measuring the rounded weights' shifts: {}", shifts.error().message)};
      model = prepared_;
      a.bias = correct_biases(model, *shifts);
      counts = insert_qdq(model, a.plan, *ranges, a.qdq);
      if (!counts) return counts.error();
    }
    a.counts = *counts;
    if (!model.SerializeToString(&a.bytes)) return Error{ErrorCode::kInvalidArgument, "the quantised model does not serialise"};
    a.file = work_ / fmt::format("candidate-{}.onnx", made_++);
    RUNG_RETURN_IF_ERROR(write_file_atomically(a.file, a.bytes));
    auto written_facts = inspect_model_file(a.file);
    if (!written_facts) return written_facts.error();
    if (written_facts->form != r_.form) {
      return Error{extra_float.empty() ? ErrorCode::kRuntime : ErrorCode::kUnsupported,
                   fmt::format("the rewritten graph reads as {} ({}), not the {} asked for", numeric_form_name(written_facts->form),
                               written_facts->form_evidence, form_recipe_name(r_.form))};
    }
    a.facts = std::move(*written_facts);
    auto scored = run_parity(scoring_options(o_, runtime_.rt, a.file, work_ / fmt::format("scoring-{}", made_)));
    if (!scored) return scored.error();
    a.scored = std::move(*scored);
    return a;
  }

  // The error each node adds to `base`, ranked, over the first few calibration inputs.
  Result<std::vector<NodeError>> rank(const Attempt& base) {
    std::vector<InputItem> few(r_.calibration.items.begin(), r_.calibration.items.begin() + std::min<std::size_t>(8, r_.calibration.items.size()));
    onnx::ModelProto quantised;
    if (!quantised.ParseFromString(base.bytes)) return Error{ErrorCode::kRuntime, "the quantised model does not parse back"};
    auto ranked = rank_node_errors(*runtime_.process, prepared_, quantised, base.plan, few, r_.plan, o_.settings.threads, work_);
    if (!ranked) return Error{ranked.error().code, fmt::format("ranking the error by node: {}", ranked.error().message)};
    return ranked;
  }

  const QdqSettings& asked() const { return asked_; }

 private:
  const QuantiseOptions& o_;
  const QdqSettings asked_;
  const QuantiseRequest& r_;
  const onnx::ModelProto& prepared_;
  const Calibration& calibrated_;
  const QuantiseRuntime& runtime_;
  const fs::path work_;
  int made_ = 0;
};

// --search, when the form as asked fails its gate: the other calibrators, then the hard
// activations float, then islands of the nodes that add the most error, the fewest that pass.
Result<Attempt> search_forms(const QuantiseOptions& o, QuantiseEvidence& ev, FormMaker& forms, Attempt asked) {
  ev.search.emplace();
  auto note = [&](const Attempt& a, const std::string& what) {
    ev.search->tried.push_back({what, a.calibrator.name(), a.plan.islands.size(), a.scored.passed(), a.scored.gates.empty() ? "" : a.scored.gates.front().summary});
    progress(o.settings, "searching", ev.search->tried.size(), 0, what);
  };
  note(asked, "as asked");
  // The other calibrators first: a clipping range can be enough.
  std::vector<Attempt> failed_forms;
  failed_forms.push_back(std::move(asked));
  for (const char* name : {"minmax", "percentile=99.999", "entropy"}) {
    auto c = Calibrator::parse(name);
    if (!c || c->name() == ev.calibrator.name()) continue;
    auto tried = forms.make(*c, {});
    if (!tried) return tried.error();
    note(*tried, fmt::format("calibrator {}", name));
    if (tried->scored.passed()) return tried;
    failed_forms.push_back(std::move(*tried));
  }
  // Then the hard activations float, calibrator by calibrator: run as an integer Add that saturates (kernel_table.h)
  // they add a quantisation step of their own, which a model reading fine detail (a recogniser's lines) can
  // not afford, while one that needs less keeps the speed.
  std::vector<std::string> hard;
  for (const char* op : {"HardSigmoid", "HardSwish"}) {
    auto it = failed_forms.front().plan.by_op.find(op);
    if (it != failed_forms.front().plan.by_op.end() && it->second.quantised > 0) hard.push_back(op);
  }
  const std::size_t calibrated_forms = failed_forms.size();
  for (std::size_t f = 0; f < calibrated_forms && !hard.empty(); ++f) {
    const Calibrator c = failed_forms[f].calibrator;
    auto tried = forms.make(c, hard);
    if (!tried) return tried.error();
    note(*tried, fmt::format("{}, {} float", c.name(), fmt::join(hard, " and ")));
    if (tried->scored.passed()) return tried;
    failed_forms.push_back(std::move(*tried));
  }
  // Then islands, form by form: the nodes that add the most error, the fewest of them that make the gate pass.
  const std::size_t asked_float = forms.asked().keep_float.size();
  for (std::size_t f = 0; f < failed_forms.size(); ++f) {
    const Attempt& base = failed_forms[f];
    auto ranked = forms.rank(base);
    if (!ranked) return ranked.error();
    std::vector<std::vector<std::string>> worst;  // each what keeping one ranked node float takes
    // At least the first (a graph output's writer, whatever its loss); past it, nodes adding half a dB or more.
    for (const auto& e : *ranked) {
      if (worst.size() >= 64) break;
      if (e.loss_db() >= 0.5 || worst.empty()) worst.push_back(e.keep_float);
    }
    if (f == 0) ev.search->ranking.assign(ranked->begin(), ranked->begin() + std::min<std::size_t>(ranked->size(), 20));
    if (worst.empty()) continue;
    auto with = [&](std::size_t k) {
      // What the base itself kept float beyond what was asked (its hard activations), and k of the worst nodes.
      std::vector<std::string> nodes(base.qdq.keep_float.begin() + static_cast<std::ptrdiff_t>(asked_float), base.qdq.keep_float.end());
      for (std::size_t i = 0; i < k; ++i) nodes.insert(nodes.end(), worst[i].begin(), worst[i].end());
      return nodes;
    };
    // Islands that leave nothing quantised are no form: fewer then.
    auto all = forms.make(base.calibrator, with(worst.size()));
    while (!all && all.error().code == ErrorCode::kUnsupported && worst.size() > 1) {
      worst.pop_back();
      all = forms.make(base.calibrator, with(worst.size()));
    }
    if (!all && all.error().code == ErrorCode::kUnsupported) continue;
    if (!all) return all.error();
    note(*all, fmt::format("{} worst nodes float", worst.size()));
    if (!all->scored.passed()) continue;
    // The fewest: the gate passes with `hi` nodes float and fails with `lo`.
    std::size_t lo = 0, hi = worst.size();
    Attempt best = std::move(*all);
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      auto tried = forms.make(base.calibrator, with(mid));
      if (!tried && tried.error().code == ErrorCode::kUnsupported) {
        lo = mid;  // fewer islands leave more quantised: this cannot happen, but a form it is not
        continue;
      }
      if (!tried) return tried.error();
      note(*tried, fmt::format("{} worst nodes float", mid));
      if (tried->scored.passed()) {
        hi = mid;
        best = std::move(*tried);
      } else {
        lo = mid;
      }
    }
    return best;
  }
  return std::move(failed_forms.front());  // nothing passed: the form as asked, with its failing report
}

// The chosen form's facts become the evidence's; its bytes are what may be written.
std::string adopt(QuantiseEvidence& ev, Attempt& chosen) {
  ev.qdq = chosen.qdq;  // the islands the search kept float are part of the recipe
  ev.calibrator = chosen.calibrator;
  ev.plan = std::move(chosen.plan);
  ev.counts = chosen.counts;
  ev.bias_correction = chosen.bias;
  ev.hazards = std::move(chosen.hazards);
  ev.output_sha256 = sha256_hex(chosen.bytes);
  ev.output_bytes = chosen.bytes.size();
  ev.output_stable_sha256 = chosen.facts.stable_sha256;
  ev.model_id = model_id(ev.name, chosen.facts.form);
  ev.form_evidence = chosen.facts.form_evidence;
  ev.scored = std::move(chosen.scored);
  return std::move(chosen.bytes);
}

// The report is written when the form is, or when one was asked for by name.
Result<QuantiseOutcome> finish(const QuantiseOptions& o, const fs::path& report_path, QuantiseEvidence& ev, QuantiseOutcome outcome) {
  outcome.failed = ev.failed;
  outcome.text = ev.text();
  outcome.json = ev.to_json();
  outcome.model_id = ev.model_id;
  if (outcome.written || !o.report.empty()) {
    RUNG_RETURN_IF_ERROR(write_file_atomically(report_path, outcome.json + "\n"));
    outcome.report_file = report_path;
  }
  return outcome;
}

}  // namespace

Result<QuantiseOutcome> run_quantise(const QuantiseOptions& o) {
  QuantiseEvidence ev;
  auto request = check_request(o, ev);
  if (!request) return request.error();
  ev.calibration = &request->calibration;
  ev.holdout = &request->holdout;
  auto source = read_source(o, ev);
  if (!source) return source.error();
  auto runtime = open_runtime(o, ev);
  if (!runtime) return runtime.error();
  auto work = open_workspace(o.settings.work_dir, "rung-quantise");
  if (!work) return work.error();

  onnx::ModelProto& prepared = source->model;
  auto proven = prepare_graph(o, ev, prepared, source->facts.opset, runtime->rt, work->path());
  if (!proven) return proven.error();
  if (!*proven) return finish(o, request->report, ev, {});
  auto calibrated = calibrate_once(o, ev, *request, prepared, *runtime->process, work->path());
  if (!calibrated) return calibrated.error();
  ev.calibration_inputs = calibrated->inputs;
  ev.calibration_seconds = calibrated->seconds;
  for (const auto& [name, stats] : calibrated->stats) ev.non_finite_values += stats.non_finite();

  FormMaker forms(o, ev, *request, prepared, *calibrated, *runtime, work->path());
  auto chosen = forms.make(ev.calibrator, {});
  if (!chosen) return chosen.error();
  if (o.search && !chosen->scored.passed()) {
    chosen = search_forms(o, ev, forms, std::move(*chosen));
    if (!chosen) return chosen.error();
    ev.search->chosen = chosen->scored.passed();
  }
  const fs::path candidate = chosen->file;
  const std::string bytes = adopt(ev, *chosen);
  prepared.Clear();

  if (o.speed_runs > 0) {
    progress(o.settings, "timing", 0, 0, "");
    auto speed = measure_speed(*runtime->process, o.model, candidate, request->calibration.items.front(), request->plan, o.settings.threads,
                               o.speed_runs, work->path() / "speed");
    if (!speed) return Error{speed.error().code, fmt::format("timing the form: {}", speed.error().message)};
    ev.speed = std::move(*speed);
  }

  failing_titles(*ev.scored, ev.failed);
  const std::optional<std::string> refused_on_speed = speed_refusal(ev.qdq.form, ev.qdq.target, ev.speed ? &*ev.speed : nullptr, o.allow_slower);
  if (refused_on_speed) ev.failed.push_back(*refused_on_speed);
  ev.allow_slower = o.allow_slower;
  QuantiseOutcome outcome;
  outcome.passed = ev.scored->passed() && !refused_on_speed;
  if (outcome.passed || o.force) {
    RUNG_RETURN_IF_ERROR(write_file_atomically(request->out, bytes));
    outcome.written = true;
    outcome.file = request->out;
    ev.output = request->out;
    ev.decision = outcome.passed ? "written" : "forced";
  } else {
    ev.decision = "refused";
  }
  return finish(o, request->report, ev, std::move(outcome));
}

}  // namespace rung
