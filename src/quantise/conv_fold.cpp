#include "quantise/conv_fold.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "graph/tensor_data.h"
#include "quantise/graph_index.h"

namespace rung {
namespace {

std::int64_t int_attribute(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

float float_attribute(const onnx::NodeProto& n, const std::string& name, float fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

// y = x * factor[c] + offset[c], one pair per output channel.
struct ChannelAffine {
  std::vector<float> factor, offset;
};

using Maps = GraphIndex;

// A constant's values spread over `channels` output channels of a rank-`rank`
// NCHW tensor, when it holds one value or one per channel and broadcasting it
// changes no shape.
std::optional<std::vector<float>> per_channel(const onnx::TensorProto& t, std::size_t channels, int rank) {
  if (t.data_type() != onnx::TensorProto::FLOAT || t.dims_size() > rank) return std::nullopt;
  auto v = float_values(t);
  if (!v) return std::nullopt;
  if (v->size() == 1) return std::vector<float>(channels, (*v)[0]);
  const int channel_dim = 1 - (rank - t.dims_size());  // the constant's axis that lines up with the output's axis 1
  for (int d = 0; d < t.dims_size(); ++d) {
    if (t.dims(d) != 1 && !(d == channel_dim && static_cast<std::size_t>(t.dims(d)) == channels)) return std::nullopt;
  }
  return v->size() == channels ? std::optional(std::move(*v)) : std::nullopt;
}

// The affine `node` applies to the tensor `x` (its data input), when it is one.
std::optional<ChannelAffine> affine_of(const onnx::NodeProto& node, const std::string& x, std::size_t channels, int rank, const Maps& m) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() || node.output_size() != 1) return std::nullopt;
  if (op == "BatchNormalization") {
    if (node.input_size() != 5 || node.input(0) != x) return std::nullopt;
    std::vector<std::vector<float>> p;
    for (int i = 1; i < 5; ++i) {
      auto it = m.init.find(node.input(i));
      if (it == m.init.end()) return std::nullopt;
      auto v = float_values(*it->second);
      if (!v || v->size() != channels) return std::nullopt;
      p.push_back(std::move(*v));
    }
    const float eps = float_attribute(node, "epsilon", 1e-5f);
    ChannelAffine a{std::vector<float>(channels), std::vector<float>(channels)};
    for (std::size_t c = 0; c < channels; ++c) {
      a.factor[c] = p[0][c] / std::sqrt(p[3][c] + eps);
      a.offset[c] = p[1][c] - p[2][c] * a.factor[c];
    }
    return a;
  }
  if ((op != "Mul" && op != "Add" && op != "Sub" && op != "Div") || node.input_size() != 2) return std::nullopt;
  const int xi = node.input(0) == x ? 0 : node.input(1) == x ? 1 : -1;
  if (xi < 0 || node.input(0) == node.input(1)) return std::nullopt;
  auto c = m.init.find(node.input(1 - xi));
  if (c == m.init.end()) return std::nullopt;
  auto v = per_channel(*c->second, channels, rank);
  if (!v) return std::nullopt;
  ChannelAffine a{std::vector<float>(channels, 1.0f), std::vector<float>(channels, 0.0f)};
  for (std::size_t k = 0; k < channels; ++k) {
    const float value = (*v)[k];
    if (op == "Mul") a.factor[k] = value;
    if (op == "Add") a.offset[k] = value;
    if (op == "Sub") xi == 0 ? void(a.offset[k] = -value) : void((a.factor[k] = -1.0f, a.offset[k] = value));
    if (op == "Div") {
      if (xi != 0 || value == 0.0f || !std::isfinite(1.0f / value)) return std::nullopt;  // c / x is no affine of x
      a.factor[k] = 1.0f / value;
    }
  }
  return a;
}

// Writes `b` as the convolution's bias: its own initializer, or a new one.
void set_bias(onnx::GraphProto& g, onnx::NodeProto& conv, Maps& m, const std::vector<float>& b) {
  if (conv.input_size() >= 3 && !conv.input(2).empty()) {
    set_float_values(*m.init[conv.input(2)], b);
    return;
  }
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(conv.input(1) + "_folded_bias");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<std::int64_t>(b.size()));
  set_float_values(*t, b);
  while (conv.input_size() < 3) conv.add_input("");
  conv.set_input(2, t->name());
}

// One pass: each convolution absorbs at most one node (the maps go stale once its output moves).
ConvFolds fold_pass(onnx::GraphProto& g, std::set<std::string>& removed_tensors) {
  Maps m(g);
  ConvFolds folds;
  std::set<const onnx::NodeProto*> folded, touched;
  for (auto& node : *g.mutable_node()) {
    if (node.input_size() < 1) continue;
    // The data input: the one a convolution writes.
    onnx::NodeProto* conv = nullptr;
    std::string x;
    for (const auto& i : node.input()) {
      auto p = m.producer.find(i);
      if (p == m.producer.end()) continue;
      const std::string& op = p->second->op_type();
      if ((op == "Conv" || op == "ConvTranspose") && p->second->domain().empty()) conv = p->second, x = i;
    }
    if (!conv || touched.count(conv) || m.uses[x] != 1 || conv->input_size() < 2) continue;
    const bool transposed = conv->op_type() == "ConvTranspose";
    if (transposed && int_attribute(*conv, "group", 1) != 1) continue;  // its weight's axis 1 counts channels per group
    auto w_it = m.init.find(conv->input(1));
    if (w_it == m.init.end() || m.uses[conv->input(1)] != 1) continue;  // a shared weight cannot be rescaled for one node
    onnx::TensorProto& w = *w_it->second;
    if (w.dims_size() < 3) continue;
    const std::size_t channels = static_cast<std::size_t>(w.dims(transposed ? 1 : 0));
    auto affine = affine_of(node, x, channels, w.dims_size(), m);
    if (!affine) continue;
    auto weights = float_values(w);
    if (!weights) continue;
    std::optional<std::vector<float>> bias;
    if (conv->input_size() >= 3 && !conv->input(2).empty()) {
      auto b_it = m.init.find(conv->input(2));
      if (b_it == m.init.end() || m.uses[conv->input(2)] != 1) continue;
      auto b = float_values(*b_it->second);
      if (!b || b->size() != channels) continue;
      bias = std::move(*b);
    }
    // Weight layout: Conv [out, in/g, k...], ConvTranspose [in, out, k...].
    std::size_t inner = 1;
    for (int d = 2; d < w.dims_size(); ++d) inner *= static_cast<std::size_t>(w.dims(d));
    const std::size_t per_out = weights->size() / channels;
    for (std::size_t k = 0; k < weights->size(); ++k) {
      const std::size_t c = transposed ? (k / inner) % channels : k / per_out;
      (*weights)[k] *= affine->factor[c];
    }
    set_float_values(w, *weights);
    std::vector<float> b(channels);
    for (std::size_t c = 0; c < channels; ++c) b[c] = (bias ? (*bias)[c] : 0.0f) * affine->factor[c] + affine->offset[c];
    set_bias(g, *conv, m, b);
    // The convolution now writes what the folded node wrote.
    removed_tensors.insert(conv->output(0));
    conv->set_output(0, node.output(0));
    folded.insert(&node);
    touched.insert(conv);
    ++(node.op_type() == "BatchNormalization" ? folds.batch_norms : folds.affines);
  }
  drop_nodes(g, folded);
  return folds;
}

bool pads_nothing(const onnx::NodeProto& conv) {
  for (const auto& a : conv.attribute()) {
    if (a.name() == "auto_pad" && a.s() != "NOTSET" && a.s() != "VALID") return false;
    if (a.name() == "pads") {
      for (auto p : a.ints()) {
        if (p != 0) return false;
      }
    }
  }
  return true;
}

// One pass of the other direction: a per-channel affine whose output only an
// unpadded, ungrouped Conv reads folds into that Conv's weights and bias
// (W' = W * factor, b' = b + sum of W * offset). A padded convolution would see
// its zero padding shifted, so it is left alone.
ConvFolds fold_before_pass(onnx::GraphProto& g, std::set<std::string>& removed_tensors) {
  Maps m(g);
  ConvFolds folds;
  std::set<const onnx::NodeProto*> folded, touched;
  for (auto& conv : *g.mutable_node()) {
    if (conv.op_type() != "Conv" || !conv.domain().empty() || conv.input_size() < 2 || touched.count(&conv)) continue;
    if (int_attribute(conv, "group", 1) != 1 || !pads_nothing(conv)) continue;
    const std::string x = conv.input(0);
    auto p = m.producer.find(x);
    if (p == m.producer.end() || m.uses[x] != 1 || folded.count(p->second)) continue;
    onnx::NodeProto& node = *p->second;
    if (node.op_type() == "BatchNormalization" || node.input_size() != 2) continue;
    auto w_it = m.init.find(conv.input(1));
    if (w_it == m.init.end() || m.uses[conv.input(1)] != 1) continue;
    onnx::TensorProto& w = *w_it->second;
    if (w.dims_size() < 3) continue;
    const std::size_t out = static_cast<std::size_t>(w.dims(0)), in = static_cast<std::size_t>(w.dims(1));
    // The node's data input: the one that is not its constant.
    std::string data;
    for (const auto& i : node.input()) {
      if (!m.init.count(i)) data = i;
    }
    if (data.empty()) continue;
    auto affine = affine_of(node, data, in, w.dims_size(), m);
    if (!affine) continue;
    auto weights = float_values(w);
    if (!weights) continue;
    std::vector<float> b(out, 0.0f);
    if (conv.input_size() >= 3 && !conv.input(2).empty()) {
      auto b_it = m.init.find(conv.input(2));
      if (b_it == m.init.end() || m.uses[conv.input(2)] != 1) continue;
      auto given = float_values(*b_it->second);
      if (!given || given->size() != out) continue;
      b = std::move(*given);
    }
    const std::size_t inner = weights->size() / (out * in);
    for (std::size_t k = 0; k < weights->size(); ++k) {
      const std::size_t o = k / (in * inner), c = (k / inner) % in;
      b[o] += (*weights)[k] * affine->offset[c];
      (*weights)[k] *= affine->factor[c];
    }
    set_float_values(w, *weights);
    set_bias(g, conv, m, b);
    removed_tensors.insert(x);
    conv.set_input(0, data);
    folded.insert(&node);
    touched.insert(&conv);
    ++folds.affines;
  }
  drop_nodes(g, folded);
  return folds;
}

}  // namespace

ConvFolds fold_into_convolutions(onnx::GraphProto& g) {
  ConvFolds total;
  std::set<std::string> removed;  // the tensors between a convolution and what it absorbed
  for (;;) {
    const ConvFolds after = fold_pass(g, removed);
    const ConvFolds before = after.total() == 0 ? fold_before_pass(g, removed) : ConvFolds{};
    if (after.total() + before.total() == 0) break;
    total.batch_norms += after.batch_norms;
    total.affines += after.affines + before.affines;
  }
  if (total.total() == 0) return total;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (auto& v : *g.mutable_value_info()) {
    if (!removed.count(v.name())) *infos.Add() = std::move(v);
  }
  g.mutable_value_info()->Swap(&infos);
  return total;
}

}  // namespace rung
