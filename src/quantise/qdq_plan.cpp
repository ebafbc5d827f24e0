// The QDQ plan: which nodes of a prepared graph are quantised for a target (its
// kernel table), which stay float and why, which tensors are converted, and the
// range each converted tensor reads (calibrated, shared, or known by construction).
#include "quantise/qdq.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "graph/tensor_data.h"
#include "quantise/qdq_graph.h"

namespace rung {
namespace {

using onnx::TensorProto;
using qdq::data_inputs;
using qdq::Graph;
using qdq::has_weights;

// Nodes that only move or select values: their output keeps the input's scale.
bool shares_input_scale(QdqTarget target, const std::string& op) { return kernel_rule(target, op).kind == KernelKind::kMovement; }

std::optional<Range> range_by_construction(const std::string& op) {
  if (op == "Sigmoid" || op == "Softmax" || op == "HardSigmoid") return Range{0, 1};
  if (op == "Tanh") return Range{-1, 1};
  return std::nullopt;
}

// Relu, or a Clip whose bounds hold zero: a quantised range (which always
// holds zero) within them clips as the node does.
bool holds_zero(const onnx::NodeProto& n, const Graph& g) {
  if (n.op_type() == "Relu") return true;
  float lo = -std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::max();
  for (const auto& a : n.attribute()) {
    if (a.name() == "min") lo = a.f();
    if (a.name() == "max") hi = a.f();
  }
  for (int i = 1; i < std::min(n.input_size(), 3); ++i) {
    if (n.input(i).empty()) continue;
    auto t = g.initializer.find(n.input(i));
    if (t == g.initializer.end()) return false;  // a computed bound
    auto v = float_values(*t->second);
    if (!v || v->size() != 1) return false;
    (i == 1 ? lo : hi) = (*v)[0];
  }
  return lo <= 0.0f && hi >= 0.0f;
}

}  // namespace

Result<NumericForm> parse_quantised_form(const std::string& text) {
  if (text == "int8" || text == "i8") return NumericForm::kInt8;
  if (text == "a16w8") return NumericForm::kA16W8;
  if (text == "a16w16") return NumericForm::kA16W16;
  if (text == "w8") return NumericForm::kW8;
  return Error{ErrorCode::kInvalidArgument, fmt::format("unknown form '{}' (expected int8, a16w8, a16w16 or w8)", text)};
}

const char* form_recipe_name(NumericForm form) {
  switch (form) {
    case NumericForm::kInt8: return "int8";
    case NumericForm::kA16W8: return "a16w8";
    case NumericForm::kA16W16: return "a16w16";
    case NumericForm::kW8: return "w8";
    default: return "?";
  }
}

QdqTarget default_qdq_target(NumericForm form) {
  return form == NumericForm::kInt8 || form == NumericForm::kW8 ? QdqTarget::kCpu : QdqTarget::kNpu;
}

int activation_bits(NumericForm form) { return form == NumericForm::kW8 ? 32 : form == NumericForm::kInt8 ? 8 : 16; }
bool weights_only(NumericForm form) { return form == NumericForm::kW8; }
int weight_bits(NumericForm form) { return form == NumericForm::kA16W16 ? 16 : 8; }

void name_unnamed_nodes(onnx::GraphProto& graph) {
  std::set<std::string> taken;
  for (const auto& n : graph.node()) taken.insert(n.name());
  int index = 0;
  for (auto& n : *graph.mutable_node()) {
    ++index;
    if (!n.name().empty()) continue;
    std::string name = fmt::format("{}_{}", n.op_type(), index);
    while (taken.count(name)) name += "_";
    taken.insert(name);
    n.set_name(name);
  }
}

Result<QdqPlan> plan_qdq(const onnx::ModelProto& prepared, const QdqSettings& s) {
  const onnx::GraphProto& graph = prepared.graph();
  const Graph g(graph);
  QdqPlan plan;
  plan.nodes = static_cast<std::size_t>(graph.node_size());

  // Islands: nodes named or of an op type named, and everything downstream of a --float-from tensor.
  std::set<std::string> island;
  for (const auto& k : s.keep_float) {
    bool matched = false;
    for (const auto& n : graph.node()) {
      if (n.name() == k || n.op_type() == k) island.insert(n.name()), matched = true;
    }
    if (!matched) return Error{ErrorCode::kInvalidArgument, fmt::format("--keep-float {}: no node of that name or op type in the graph", k)};
  }
  for (const auto& t : s.float_from) {
    if (!g.elem_type.count(t) && !g.consumers.count(t)) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("--float-from {}: no tensor of that name in the graph", t)};
    }
    std::vector<std::string> frontier{t};
    std::set<std::string> seen;
    while (!frontier.empty()) {
      const std::string tensor = frontier.back();
      frontier.pop_back();
      if (!seen.insert(tensor).second) continue;
      auto it = g.consumers.find(tensor);
      if (it == g.consumers.end()) continue;
      for (const auto* n : it->second) {
        island.insert(n->name());
        for (const auto& o : n->output()) frontier.push_back(o);
      }
    }
  }

  std::set<std::string> activations;
  std::set<std::string> quantised_tensors;  // written by a quantised node: reading them quantised costs no conversion
  auto stays_float = [&](const onnx::NodeProto& n, const std::string& why) {
    ++plan.unsupported;
    auto& p = plan.by_op[n.op_type()];
    ++p.float_nodes;
    p.reasons.insert(why);
  };
  for (const auto& n : graph.node()) {
    if (island.count(n.name())) {
      plan.islands.push_back(n.name());
      auto& p = plan.by_op[n.op_type()];
      ++p.float_nodes;
      p.reasons.insert("kept float by --keep-float or --float-from");
      continue;
    }
    if (weights_only(s.form)) {
      // Only the weights change: a weighted node reading a float initializer as its weight, and data that is not one.
      const bool weighted = has_weights(n.op_type()) && n.input_size() > 1 && g.is_initializer(n.input(1)) && g.is_float(n.input(1)) &&
                            !g.is_initializer(n.input(0));
      if (!weighted) {
        stays_float(n, "no weight to store as int8");
        continue;
      }
      plan.quantised.insert(n.name());
      ++plan.by_op[n.op_type()].quantised;
      continue;
    }
    const KernelRule rule = n.domain().empty() ? kernel_rule(s.target, n.op_type()) : KernelRule{KernelKind::kNone, "not an ONNX operator"};
    if (rule.kind == KernelKind::kNone) {
      stays_float(n, rule.why);
      continue;
    }
    // Quantised only when every data input is a known float tensor (and a weighted node's input is not itself a weight).
    const auto data = data_inputs(n);
    const bool all_float = !data.empty() && std::all_of(data.begin(), data.end(), [&](int i) { return g.is_float(n.input(i)); }) &&
                           !(has_weights(n.op_type()) && g.is_initializer(n.input(0)));
    if (!all_float) {
      stays_float(n, "its data inputs are not float tensors");
      continue;
    }
    const bool reads_quantised = std::any_of(data.begin(), data.end(), [&](int i) { return quantised_tensors.count(n.input(i)) > 0; });
    if ((rule.kind == KernelKind::kElementwise || rule.kind == KernelKind::kMovement || rule.kind == KernelKind::kSaturating) &&
        !reads_quantised) {
      stays_float(n, "no input is quantised: converting its inputs would cost more than its kernel saves");
      continue;
    }
    if (rule.kind == KernelKind::kFolded) {
      // Folded when the node before it is quantised, writes only to it, and its bounds hold zero (the output's range does the clipping).
      const std::string& in = n.input(0);
      auto made_by = g.producer.find(in);
      const bool after_quantised = made_by != g.producer.end() && plan.quantised.count(made_by->second->name()) &&
                                   !plan.folded.count(made_by->second->name()) && !shares_input_scale(s.target, made_by->second->op_type());
      const bool sole = g.consumers.count(in) && g.consumers.at(in).size() == 1 && !g.outputs.count(in);
      if (!after_quantised || !sole || !holds_zero(n, g)) {
        stays_float(n, "not right after a quantised node it can fold into");
        continue;
      }
      plan.quantised.insert(n.name());
      plan.folded.insert(n.name());
      ++plan.by_op[n.op_type()].folded;
      activations.erase(in);
      quantised_tensors.erase(in);
      for (const auto& o : n.output()) activations.insert(o), quantised_tensors.insert(o);
      continue;
    }
    plan.quantised.insert(n.name());
    ++plan.by_op[n.op_type()].quantised;
    for (int i : data) {
      if (!g.is_initializer(n.input(i))) activations.insert(n.input(i));
    }
    for (const auto& o : n.output()) {
      if (!g.is_float(o)) continue;
      activations.insert(o);
      quantised_tensors.insert(o);
      if (rule.kind == KernelKind::kMovement && !g.is_initializer(n.input(0))) plan.shared[o] = n.input(0);
      if (auto r = range_by_construction(n.op_type())) plan.fixed[o] = *r;
    }
  }
  // In graph order: inputs first, then each node's outputs.
  auto take = [&](const std::string& t) {
    if (activations.erase(t) && !(g.inputs.count(t) && g.outputs.count(t))) plan.activations.push_back(t);
  };
  for (const auto& in : graph.input()) take(in.name());
  for (const auto& n : graph.node()) {
    for (const auto& o : n.output()) take(o);
  }
  return plan;
}

std::vector<std::string> QdqPlan::calibrated() const {
  std::vector<std::string> out;
  for (const auto& t : activations) {
    if (!shared.count(t) && !fixed.count(t)) out.push_back(t);
  }
  return out;
}

Result<std::map<std::string, Range>> QdqPlan::resolve(std::map<std::string, Range> ranges) const {
  for (const auto& [t, r] : fixed) ranges[t] = r;
  for (const auto& t : activations) {
    std::string source = t;
    for (std::size_t hops = 0; shared.count(source); ++hops) {
      if (hops > shared.size()) return Error{ErrorCode::kInvalidArgument, fmt::format("tensor '{}': a cycle of shared scales", t)};
      source = shared.at(source);
    }
    auto r = ranges.find(source);
    if (r == ranges.end()) return Error{ErrorCode::kInvalidArgument, fmt::format("no calibrated range for tensor '{}'", source)};
    ranges[t] = r->second;
  }
  return ranges;
}

}  // namespace rung
