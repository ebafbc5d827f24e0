#include "quantise/activation_fold.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/tensor_data.h"
#include "quantise/graph_index.h"

namespace rung {
namespace {

struct Index : GraphIndex {
  using GraphIndex::GraphIndex;
  // The single value of a float initializer.
  std::optional<float> scalar(const std::string& t) const {
    auto it = init.find(t);
    if (it == init.end() || it->second->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
    auto v = float_values(*it->second);
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  }
  // The producer of `t` when it is an `op` node whose output only its one consumer reads.
  onnx::NodeProto* sole(const std::string& t, const char* op) const {
    auto it = producer.find(t);
    if (it == producer.end() || it->second->op_type() != op || !it->second->domain().empty()) return nullptr;
    auto u = uses.find(t);
    return u != uses.end() && u->second == 1 ? it->second : nullptr;
  }
};

bool near(float v, double want) { return std::fabs(v - want) <= 1e-6 * std::fabs(want); }

// For a binary node, the input that is not the scalar constant `want`.
std::optional<std::string> other_than_scalar(const onnx::NodeProto& n, const Index& ix, double want) {
  if (n.input_size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (auto v = ix.scalar(n.input(i)); v && near(*v, want)) return n.input(1 - i);
  }
  return std::nullopt;
}

float attribute_f(const onnx::NodeProto& n, const char* name, float fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

// Clip's bounds: inputs from opset 11, attributes before.
std::optional<std::pair<float, float>> clip_bounds(const onnx::NodeProto& n, const Index& ix) {
  if (n.input_size() >= 3) {
    auto lo = ix.scalar(n.input(1)), hi = ix.scalar(n.input(2));
    if (!lo || !hi) return std::nullopt;
    return std::pair{*lo, *hi};
  }
  if (n.input_size() == 1) return std::pair{attribute_f(n, "min", -3.4e38f), attribute_f(n, "max", 3.4e38f)};
  return std::nullopt;
}

void set_float(onnx::NodeProto& n, const char* name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// Div(x, c) -> Mul(x, 1 / c) for a float constant without zeros.
int divisions_to_multiplications(onnx::GraphProto& g) {
  Index ix(g);
  std::map<std::string, std::string> reciprocal;  // constant -> its reciprocal's initializer
  int count = 0;
  for (auto& n : *g.mutable_node()) {
    if (n.op_type() != "Div" || !n.domain().empty() || n.input_size() != 2) continue;
    auto c = ix.init.find(n.input(1));
    if (c == ix.init.end() || c->second->data_type() != onnx::TensorProto::FLOAT) continue;
    auto it = reciprocal.find(n.input(1));
    if (it == reciprocal.end()) {
      auto v = float_values(*c->second);
      if (!v) continue;
      bool finite = true;
      for (float& x : *v) {
        x = 1.0f / x;
        finite = finite && std::isfinite(x);
      }
      if (!finite) continue;
      onnx::TensorProto t;
      t.set_name(n.input(1) + "_reciprocal");
      t.set_data_type(onnx::TensorProto::FLOAT);
      *t.mutable_dims() = c->second->dims();
      set_float_values(t, *v);
      *g.add_initializer() = std::move(t);
      it = reciprocal.emplace(n.input(1), n.input(1) + "_reciprocal").first;
      ix = Index(g);  // the initializers moved
    }
    n.set_op_type("Mul");
    n.set_input(1, it->second);
    ++count;
  }
  return count;
}

// Mul(Mul(x, Clip(...)), k) -> Mul(x, Mul(Clip(...), k)): the scaled clip is then a hard-sigmoid.
void scale_the_clipped_factor(onnx::GraphProto& g) {
  Index ix(g);
  for (auto& outer : *g.mutable_node()) {
    if (outer.op_type() != "Mul" || !outer.domain().empty()) continue;
    auto product = other_than_scalar(outer, ix, 1.0 / 6.0);
    if (!product) continue;
    onnx::NodeProto* inner = ix.sole(*product, "Mul");
    if (!inner || inner->input_size() != 2) continue;
    const int ci = ix.sole(inner->input(0), "Clip") ? 0 : ix.sole(inner->input(1), "Clip") ? 1 : -1;
    if (ci < 0) continue;
    const std::string x = inner->input(1 - ci), clipped = inner->input(ci), k = outer.input(0) == *product ? outer.input(1) : outer.input(0);
    // inner: clipped * k -> product; outer: x * product -> its output (same names, same order in the graph).
    inner->set_input(0, clipped);
    inner->set_input(1, k);
    outer.set_input(0, x);
    outer.set_input(1, *product);
  }
}

// Mul(Clip(Add(x, 3), 0, 6), 1/6) -> HardSigmoid(x), alpha 1/6, beta 1/2.
int hard_sigmoids(onnx::GraphProto& g, std::set<const onnx::NodeProto*>& dropped, std::set<std::string>& made) {
  Index ix(g);
  int count = 0;
  for (auto& mul : *g.mutable_node()) {
    if (mul.op_type() != "Mul" || !mul.domain().empty()) continue;
    auto clipped = other_than_scalar(mul, ix, 1.0 / 6.0);
    if (!clipped) continue;
    onnx::NodeProto* clip = ix.sole(*clipped, "Clip");
    if (!clip) continue;
    auto bounds = clip_bounds(*clip, ix);
    if (!bounds || bounds->first != 0.0f || bounds->second != 6.0f) continue;
    onnx::NodeProto* add = ix.sole(clip->input(0), "Add");
    if (!add) continue;
    auto x = other_than_scalar(*add, ix, 3.0);
    if (!x) continue;
    dropped.insert(clip);
    dropped.insert(add);
    mul.set_op_type("HardSigmoid");
    mul.clear_input();
    mul.add_input(*x);
    set_float(mul, "alpha", 1.0f / 6.0f);
    set_float(mul, "beta", 0.5f);
    made.insert(mul.output(0));
    ++count;
  }
  return count;
}

// Mul(x, HardSigmoid(x; 1/6, 1/2)) -> HardSwish(x).
// Returns how many it made; `made` loses the hard-sigmoids they took.
int hard_swishes(onnx::GraphProto& g, std::set<const onnx::NodeProto*>& dropped, std::set<std::string>& made) {
  Index ix(g);
  int count = 0;
  for (auto& mul : *g.mutable_node()) {
    if (mul.op_type() != "Mul" || !mul.domain().empty() || mul.input_size() != 2) continue;
    for (int i = 0; i < 2; ++i) {
      onnx::NodeProto* hs = ix.sole(mul.input(i), "HardSigmoid");
      if (!hs || dropped.count(hs) || hs->input(0) != mul.input(1 - i)) continue;
      if (!near(attribute_f(*hs, "alpha", 0.2f), 1.0 / 6.0) || attribute_f(*hs, "beta", 0.5f) != 0.5f) continue;
      dropped.insert(hs);
      made.erase(hs->output(0));
      const std::string x = mul.input(1 - i);
      mul.set_op_type("HardSwish");
      mul.clear_input();
      mul.add_input(x);
      ++count;
      break;
    }
  }
  return count;
}

}  // namespace

ActivationFolds fold_activations(onnx::GraphProto& g, std::int64_t opset) {
  ActivationFolds f;
  f.divisions = divisions_to_multiplications(g);
  scale_the_clipped_factor(g);
  std::set<const onnx::NodeProto*> dropped;
  std::set<std::string> made;  // the hard-sigmoids folded here
  hard_sigmoids(g, dropped, made);
  drop_nodes(g, dropped);
  dropped.clear();
  if (opset >= 14) {  // HardSwish arrived in opset 14
    f.hard_swishes = hard_swishes(g, dropped, made);
    drop_nodes(g, dropped);
  }
  f.hard_sigmoids = static_cast<int>(made.size());
  // Tensors between folded nodes keep no stale shapes.
  std::set<std::string> written;
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) written.insert(o);
  }
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (auto& v : *g.mutable_value_info()) {
    if (written.count(v.name())) *infos.Add() = std::move(v);
  }
  g.mutable_value_info()->Swap(&infos);
  return f;
}

}  // namespace rung
