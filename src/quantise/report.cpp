#include "quantise/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "os/json_input.h"
#include "rung/json_text.h"
#include "rung/ratio_text.h"

namespace rung {
namespace {

const char* type_name(int bits, bool is_signed) {
  if (bits == 32) return "float32";
  if (bits == 8) return is_signed ? "int8" : "uint8";
  return is_signed ? "int16" : "uint16";
}

nlohmann::json set_json(const InputSet* s, std::size_t inputs) {
  if (s == nullptr) return nullptr;
  return {{"dir", s->dir.string()}, {"inputs", inputs}, {"files", s->file_sha256.size()}, {"set_sha256", s->sha256}, {"file_sha256", s->file_sha256}};
}

nlohmann::json gates_json(const ParityReport& r) {
  nlohmann::json gs = nlohmann::json::array();
  for (const auto& g : r.gates) {
    gs.push_back({{"decoder", g.decoder},
                  {"title", g.title},
                  {"passed", g.passed},
                  {"summary", g.summary},
                  {"details", g.details},
                  {"stats", parse_json_or(g.stats_json, nlohmann::json::object())}});
  }
  return gs;
}

nlohmann::json calibrator_json(const Calibrator& c) {
  nlohmann::json j = {{"method", c.name()}};
  if (c.method == Calibrator::Method::kPercentile) j["percentile"] = c.percentile;
  if (c.histogram_bins() > 0) j["bins"] = c.histogram_bins();
  return j;
}

std::string calibrator_text(const Calibrator& c) {
  if (c.method == Calibrator::Method::kPercentile) return fmt::format("percentile={:g} ({} bins)", c.percentile, c.bins);
  if (c.method == Calibrator::Method::kEntropy) return fmt::format("entropy ({} bins)", c.bins);
  return "minmax";
}

std::string weights_text(const QdqSettings& s) {
  return fmt::format("{}{} {}", type_name(weight_bits(s.form), true), s.reduce_range && weight_bits(s.form) == 8 ? " (7-bit range)" : "",
                     s.per_channel ? "symmetric per channel" : "symmetric per tensor");
}

nlohmann::json times_json(const KernelTimes& k) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : k.ops) ops.push_back({{"op", o.op}, {"input_type", o.input_type}, {"nodes", o.nodes}, {"kernel_ms", o.kernel_us / 1000.0}});
  return {{"run_ms", k.run_ms}, {"kernel_ms", k.kernel_ms}, {"conversion_ms", k.conversion_ms}, {"conversion_nodes", k.conversion_nodes},
          {"integer_ms", k.integer_ms}, {"float_ms", k.float_ms}, {"ops", ops}};
}

nlohmann::json by_op_json(const QdqPlan& plan) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [op, p] : plan.by_op) {
    j[op] = {{"quantised", p.quantised}, {"folded", p.folded}, {"float", p.float_nodes}, {"float_because", p.reasons}};
  }
  return j;
}

}  // namespace

nlohmann::json QuantiseEvidence::bias_correction_json() const {
  if (!bias_correction) return nullptr;
  return {{"nodes", bias_correction->nodes}, {"uncorrected", bias_correction->uncorrected}, {"inputs", calibration_inputs},
          {"method", "each weighted node's mean output shift per channel, its rounded weights against its float ones on the float graph's tensors"}};
}

std::string QuantiseEvidence::to_json() const {
  const int abits = activation_bits(qdq.form), wbits = weight_bits(qdq.form);
  nlohmann::json preparation = {{"from_opset", source_opset},
                                 {"to_opset", opset},
                                 {"converter", upgraded_to ? nlohmann::json("ONNX version converter (libonnx)") : nlohmann::json(nullptr)},
                                 {"batch_norms_folded", conv_folds.batch_norms},
                                 {"affines_folded", conv_folds.affines},
                                 {"divisions_to_multiplications", activation_folds.divisions},
                                 {"hard_sigmoids_folded", activation_folds.hard_sigmoids},
                                 {"hard_swishes_folded", activation_folds.hard_swishes},
                                 {"proof", nullptr}};
  if (upgrade_proof) {
    preparation["proof"] = {{"tolerance", {{"name", "close"}, {"atol", upgrade_proof->tolerance.atol}, {"rtol", upgrade_proof->tolerance.rtol}}},
                            {"inputs", upgrade_proof->parity.inputs},
                            {"proven", upgrade_proof->proven},
                            {"failing_output", upgrade_proof->failing_output.empty() ? nlohmann::json(nullptr) : nlohmann::json(upgrade_proof->failing_output)},
                            {"gates", gates_json(upgrade_proof->parity)},
                            {"vouched_by_decisions", upgrade_proof->by_decisions()},
                            {"decision_gates", upgrade_proof->decisions ? gates_json(*upgrade_proof->decisions) : nlohmann::json(nullptr)}};
  }
  nlohmann::json hz = nlohmann::json::array();
  for (const auto& h : hazards) {
    nlohmann::json narrow = nlohmann::json::array();
    for (const auto& n : h.narrow) narrow.push_back({{"tensor", n.tensor}, {"range", {n.range.lo, n.range.hi}}, {"levels", n.levels}});
    hz.push_back({{"kind", "mixed_range"},
                  {"node", h.node},
                  {"output", h.output},
                  {"joined_range", {h.joined.lo, h.joined.hi}},
                  {"bits", h.bits},
                  {"narrow_inputs", narrow},
                  {"island", fmt::format("{}", fmt::join(h.island, " "))},
                  {"message", h.describe()}});
  }
  nlohmann::json j = {
      {"schema", "rung-quantise-report"},
      {"schema_version", 1},
      {"rung_version", RUNG_VERSION},
      {"created", created},
      {"command", command},
      {"decision", decision},
      {"failed", failed},
      {"source",
       {{"file", source.string()},
        {"sha256", source_sha256},
        {"stable_sha256", source_stable_sha256},
        {"opset", source_opset},
        {"nodes", source_nodes}}},
      {"preparation", preparation},
      {"recipe",
       {{"name", name},
        {"form", form_recipe_name(qdq.form)},
        {"opset", opset},
        {"activations", {{"type", type_name(abits, qdq.signed_activations)}, {"scheme", weights_only(qdq.form) ? "float" : "asymmetric per tensor"}}},
        {"weights",
         {{"type", type_name(wbits, true)},
          {"scheme", qdq.per_channel ? "symmetric per channel" : "symmetric per tensor"},
          {"reduce_range", qdq.reduce_range && wbits == 8}}},
        {"bias", weights_only(qdq.form) ? nlohmann::json{{"type", "float32"}, {"scale", nullptr}, {"corrected", bias_correction_json()}}
                                        : nlohmann::json{{"type", "int32"}, {"scale", "input scale x weight scale"}}},
        {"qdq_domain", weights_only(qdq.form)            ? "none: int8 weights behind Cast and Mul, folded by ONNX Runtime when the session is built"
                       : abits == 16 || wbits == 16 ? "com.microsoft for 16-bit tensors, ai.onnx otherwise"
                                                    : "ai.onnx"},
        {"calibrator", weights_only(qdq.form) ? nlohmann::json(nullptr) : calibrator_json(calibrator)},
        {"target", qdq_target_name(qdq.target)},
        {"islands", {{"keep_float", qdq.keep_float}, {"float_from", qdq.float_from}, {"float_nodes", plan.islands}}}}},
      {"graph",
       {{"nodes", plan.nodes},
        {"quantised_nodes", plan.quantised.size()},
        {"folded_activations", plan.folded.size()},
        {"by_op", by_op_json(plan)},
        {"island_nodes", plan.islands.size()},
        {"unsupported_nodes", plan.unsupported},
        {"activation_pairs", counts.activations},
        {"shared_scales", plan.shared.size()},
        {"weights", counts.weights},
        {"biases", counts.biases},
        {"constants", counts.constants},
        {"raised_weight_scales", counts.raised_scales},
        {"saturating_activations", counts.saturated}}},
      {"hazards", hz},
      {"calibration", set_json(calibration, calibration_inputs)},
      {"holdout", set_json(holdout, holdout != nullptr ? holdout->items.size() : 0)},
      {"gate_file", {{"file", gate_file.string()}, {"sha256", gate_file_sha256}}},
      {"scored_on",
       {{"rung", "cpu"},
        {"provider", "CPUExecutionProvider"},
        {"runtime", {{"version", runtime_version}, {"library", runtime_library.string()}}},
        {"device", device},
        {"note", kScoredOnNote}}},
      {"gates", scored ? gates_json(*scored) : nlohmann::json::array()},
      {"output",
       {{"written", !output.empty()},
        {"file", output.empty() ? nlohmann::json(nullptr) : nlohmann::json(output.string())},
        {"sha256", output_sha256.empty() ? nlohmann::json(nullptr) : nlohmann::json(output_sha256)},
        {"stable_sha256", output_stable_sha256.empty() ? nlohmann::json(nullptr) : nlohmann::json(output_stable_sha256)},
        {"size_bytes", output_bytes},
        {"model_id", model_id},
        {"form_evidence", form_evidence}}}};
  // The CPU features that decide a quantised form's speed there (rung doctor names them too).
  j["scored_on"]["cpu_features"] = nlohmann::json::object();
  for (const auto& f : cpu_features) j["scored_on"]["cpu_features"][f.id] = f.present;
  j["search"] = nullptr;
  if (search) {
    nlohmann::json tried = nlohmann::json::array(), ranking = nlohmann::json::array();
    for (const auto& t : search->tried) {
      tried.push_back({{"what", t.what}, {"calibrator", t.calibrator}, {"float_nodes", t.float_nodes}, {"passed", t.passed}, {"summary", t.summary}});
    }
    for (const auto& e : search->ranking) {
      ranking.push_back({{"node", e.node}, {"op", e.op}, {"output", e.output}, {"input_sqnr_db", e.input_db}, {"output_sqnr_db", e.output_db},
                         {"loss_db", e.loss_db()}});
    }
    j["search"] = {{"tried", tried}, {"worst_nodes", ranking}, {"found", search->chosen}};
  }
  j["speed"] = nullptr;
  if (speed) {
    const SpeedJudgement v = speed->judgement();
    const SpeedRule rule = quantised_speed_rule();
    nlohmann::json interval = nullptr;
    if (v.pairs >= rule.min_pairs) interval = {{"low", v.low}, {"high", v.high}, {"confidence", rule.confidence}};
    j["speed"] = {{"input", speed->input}, {"runs", speed->runs}, {"speedup", speed->speedup()}, {"slower", speed->speedup() < 1.0},
                  {"verdict", speed_call_name(v.call)}, {"interval", interval}, {"slower_allowed", allow_slower},
                  {"f32_runs_ms", speed->f32_runs_ms}, {"quantised_runs_ms", speed->quantised_runs_ms},
                  {"f32", times_json(speed->f32)}, {"quantised", times_json(speed->quantised)},
                  {"note", "median wall time of runs taken in turns, and ONNX Runtime's profile of three more, in this process on this CPU"}};
  }
  if (calibration != nullptr) {
    j["calibration"]["seconds"] = calibration_seconds;
    j["calibration"]["non_finite_values"] = non_finite_values;
  }
  return json_text(j, 2);
}

std::string QuantiseEvidence::text() const {
  std::string out = fmt::format("quantise  {} -> {} ({}: {} activations, {} weights{})\n", source.filename().string(),
                                model_id.empty() ? name : model_id, form_recipe_name(qdq.form),
                                type_name(activation_bits(qdq.form), qdq.signed_activations), weights_text(qdq),
                                weights_only(qdq.form) ? ", float arithmetic" : "; " + calibrator_text(calibrator));
  if (upgrade_proof) {
    std::vector<std::string> changes;
    if (upgraded_to) changes.push_back(fmt::format("opset {} -> {}", source_opset, *upgraded_to));
    if (conv_folds.batch_norms > 0) changes.push_back(fmt::format("{} BatchNormalization folded", conv_folds.batch_norms));
    if (conv_folds.affines > 0) changes.push_back(fmt::format("{} per-channel Mul/Add folded into convolutions", conv_folds.affines));
    if (activation_folds.divisions > 0) changes.push_back(fmt::format("{} Div by a constant made a Mul", activation_folds.divisions));
    if (activation_folds.hard_sigmoids > 0) changes.push_back(fmt::format("{} hard-sigmoid patterns made HardSigmoid", activation_folds.hard_sigmoids));
    if (activation_folds.hard_swishes > 0) changes.push_back(fmt::format("{} hard-swish patterns made HardSwish", activation_folds.hard_swishes));
    out += fmt::format("prepare   {}, ", fmt::join(changes, ", "));
    if (upgrade_proof->by_decisions()) {
      const auto& g = upgrade_proof->parity.gates.front();
      out += fmt::format("not every output within atol {:g}, rtol {:g} ({}), but the model's gates decide the same on those inputs:\n",
                         upgrade_proof->tolerance.atol, upgrade_proof->tolerance.rtol, g.summary);
      for (const auto& d : upgrade_proof->decisions->gates) out += fmt::format("          {}: {}\n", d.title, d.summary);
    } else {
      out += upgrade_proof->proven ? fmt::format("proven the same on {} inputs (every output within atol {:g}, rtol {:g})\n", upgrade_proof->parity.inputs,
                                                 upgrade_proof->tolerance.atol, upgrade_proof->tolerance.rtol)
                                   : fmt::format("NOT the same: output '{}' differs\n", upgrade_proof->failing_output);
    }
  }
  if (calibration && weights_only(qdq.form)) {
    out += fmt::format("calibrate none: no activation is quantised; {} inputs from {} (set {}) measured each rounded node's shift", calibration_inputs,
                       calibration->dir.string(), calibration->sha256.substr(0, 12));
    out += bias_correction ? fmt::format(": {} bias{} corrected{}\n", bias_correction->nodes, bias_correction->nodes == 1 ? "" : "es",
                                         bias_correction->uncorrected == 0 ? std::string()
                                                                           : fmt::format(", {} node{} without a bias to correct", bias_correction->uncorrected,
                                                                                       bias_correction->uncorrected == 1 ? "" : "s"))
                           : "\n";
  } else if (calibration) {
    out += fmt::format("calibrate {} inputs from {} in {:.1f} s (set {})\n", calibration_inputs, calibration->dir.string(), calibration_seconds,
                       calibration->sha256.substr(0, 12));
  }
  if (!qdq.keep_float.empty() || !qdq.float_from.empty()) {
    out += fmt::format("islands   {} node{} kept float{}{}\n", plan.islands.size(), plan.islands.size() == 1 ? "" : "s",
                       qdq.keep_float.empty() ? "" : fmt::format("; --keep-float {}", fmt::join(qdq.keep_float, ", ")),
                       qdq.float_from.empty() ? "" : fmt::format("; --float-from {}", fmt::join(qdq.float_from, ", ")));
  }
  if (plan.nodes > 0) {
    out += fmt::format("graph     {} nodes for the {}: {} quantised ({} activations folded into the node before), {} float ({} by islands, {} "
                       "placed float); {} Q/DQ pairs, {} weights, {} int32 biases, {} constants{}\n",
                       plan.nodes, qdq_target_name(qdq.target), plan.quantised.size(), plan.folded.size(), plan.nodes - plan.quantised.size(),
                       plan.islands.size(), plan.unsupported, counts.activations, counts.weights, counts.biases, counts.constants,
                       counts.saturated == 0 ? std::string()
                                             : fmt::format("; {} HardSigmoid/HardSwish as an integer Add saturating at their bounds", counts.saturated));
    for (const auto& [op, p] : plan.by_op) {
      out += fmt::format("          {:<20} {:>4} quantised{} {:>4} float{}\n", op, p.quantised,
                         p.folded > 0 ? fmt::format(", {} folded", p.folded) : "", p.float_nodes,
                         p.reasons.empty() ? "" : fmt::format(" ({})", fmt::join(p.reasons, "; ")));
    }
  }
  for (const auto& h : hazards) out += fmt::format("HAZARD    {}\n", h.describe());
  if (search) {
    out += fmt::format("search    the form as asked failed its gate; {}:\n", search->chosen ? "a passing form was found" : "no passing form was found");
    for (const auto& t : search->tried) {
      out += fmt::format("          {} {:<28} {:<12} {}\n", t.passed ? "PASS" : "FAIL", t.what, t.calibrator, t.summary);
    }
    if (!search->ranking.empty()) {
      out += "          nodes adding the most error (SQNR in -> out, on a few calibration inputs):";
      for (std::size_t i = 0; i < std::min<std::size_t>(search->ranking.size(), 8); ++i) {
        const auto& e = search->ranking[i];
        out += fmt::format("{} {} ({}) {:.1f} -> {:.1f} dB", i == 0 ? "" : ",", e.node, e.op, e.input_db, e.output_db);
      }
      out += "\n";
    }
  }
  if (speed) {
    const auto& q = speed->quantised;
    const double time_ratio = speed->f32.run_ms > 0 ? q.run_ms / speed->f32.run_ms : 0;
    out += fmt::format("speed     {} f32's time on this CPU ({:.2f} vs {:.2f} ms a run, median of {} in turns on {}){}\n", ratio_cell(time_ratio), q.run_ms,
                       speed->f32.run_ms, speed->runs, speed->input,
                       speed->speedup() < 1.0 ? ": SLOWER than f32 here" : "");
    const SpeedJudgement v = speed->judgement();
    const SpeedRule rule = quantised_speed_rule();
    if (v.pairs < rule.min_pairs) {
      out += fmt::format("          not judged: {} runs in turns are too few to tell slower from noise (at least {})\n", v.pairs, rule.min_pairs);
    } else {
      out += fmt::format("          {}: {} f32's time run by run ({:.0f}% interval of the median){}\n", speed_call_name(v.call), ratio_range_text(v.low, v.high),
                         100.0 * rule.confidence,
                         v.call == SpeedCall::kSlower && allow_slower ? "; written all the same (--allow-slower)" : "");
    }
    const double total = q.kernel_ms > 0 ? q.kernel_ms : 1;
    out += fmt::format("          profiled kernels {:.2f} ms (f32 {:.2f}): {:.2f} ms in {} conversions ({:.0f}%), {:.2f} in integer kernels, {:.2f} in float islands\n",
                       q.kernel_ms, speed->f32.kernel_ms, q.conversion_ms, q.conversion_nodes, 100.0 * q.conversion_ms / total, q.integer_ms,
                       q.float_ms);
  }
  if (scored) {
    out += fmt::format("scored    on {} inputs of {} (set {}) · CPU · ONNX Runtime {} · {}\n", scored->inputs, holdout ? holdout->dir.string() : "?",
                       holdout ? holdout->sha256.substr(0, 12) : "?", runtime_version, device);
    out += "          (ONNX Runtime's CPU running the QDQ graph: not a measurement on the NPU that will load it)\n\n";
    for (const auto& g : scored->gates) {
      out += fmt::format("{}  {}: {}\n", g.passed ? "PASS" : "FAIL", g.title, g.summary);
      for (const auto& d : g.details) out += fmt::format("      {}\n", d);
    }
    out += "\n";
  }
  if (decision == "written") {
    out += fmt::format("WRITTEN   {} ({}, sha256 {})\n", output.string(), model_id, output_sha256.substr(0, 12));
  } else if (decision == "forced") {
    out += fmt::format("FORCED    {} ({}, sha256 {}) written although {} failed\n", output.string(), model_id, output_sha256.substr(0, 12),
                       fmt::join(failed, ", "));
  } else {
    out += fmt::format("REFUSED   {} failed; nothing written\n", fmt::join(failed, ", "));
  }
  return out;
}

}  // namespace rung
