#include "quantise/batch_norm_fold.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "graph/tensor_data.h"

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

}  // namespace

int fold_batch_norms(onnx::GraphProto& g) {
  std::map<std::string, onnx::TensorProto*> init;
  for (auto& t : *g.mutable_initializer()) init[t.name()] = &t;
  std::map<std::string, int> uses;
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) ++uses[i];
  }
  for (const auto& o : g.output()) ++uses[o.name()];
  std::map<std::string, onnx::NodeProto*> producer;
  for (auto& n : *g.mutable_node()) {
    for (const auto& o : n.output()) producer[o] = &n;
  }

  std::set<const onnx::NodeProto*> folded;
  std::set<std::string> removed;  // the tensors between a convolution and its normalisation
  int count = 0;
  for (auto& bn : *g.mutable_node()) {
    if (bn.op_type() != "BatchNormalization" || !bn.domain().empty() || bn.input_size() != 5 || bn.output_size() != 1) continue;
    auto p = producer.find(bn.input(0));
    if (p == producer.end()) continue;
    onnx::NodeProto& conv = *p->second;
    const bool transposed = conv.op_type() == "ConvTranspose";
    if ((conv.op_type() != "Conv" && !transposed) || !conv.domain().empty() || uses[bn.input(0)] != 1) continue;
    if (transposed && int_attribute(conv, "group", 1) != 1) continue;  // its weight's axis 1 counts channels per group
    if (conv.input_size() < 2 || !init.count(conv.input(1))) continue;
    bool params = true;
    for (int i = 1; i < 5; ++i) params = params && init.count(bn.input(i));
    if (!params) continue;
    onnx::TensorProto& w = *init[conv.input(1)];
    auto weights = float_values(w);
    auto scale = float_values(*init[bn.input(1)]), shift = float_values(*init[bn.input(2)]);
    auto mean = float_values(*init[bn.input(3)]), var = float_values(*init[bn.input(4)]);
    if (!weights || !scale || !shift || !mean || !var || w.dims_size() < 2) continue;
    const std::size_t channels = static_cast<std::size_t>(w.dims(transposed ? 1 : 0));
    if (scale->size() != channels || shift->size() != channels || mean->size() != channels || var->size() != channels) continue;
    // A weight shared with another node cannot be rescaled for this one alone.
    if (uses[conv.input(1)] != 1) continue;
    std::optional<std::vector<float>> bias;
    if (conv.input_size() >= 3 && !conv.input(2).empty()) {
      if (!init.count(conv.input(2)) || uses[conv.input(2)] != 1) continue;
      auto b = float_values(*init[conv.input(2)]);
      if (!b || b->size() != channels) continue;
      bias = std::move(*b);
    }

    const float eps = float_attribute(bn, "epsilon", 1e-5f);
    std::vector<float> factor(channels);
    for (std::size_t c = 0; c < channels; ++c) factor[c] = (*scale)[c] / std::sqrt((*var)[c] + eps);
    // Weight layout: Conv [out, in/g, k...], ConvTranspose [in, out, k...].
    std::size_t inner = 1;
    for (int d = 2; d < w.dims_size(); ++d) inner *= static_cast<std::size_t>(w.dims(d));
    const std::size_t outer_stride = transposed ? channels * inner : inner;
    for (std::size_t k = 0; k < weights->size(); ++k) {
      const std::size_t c = transposed ? (k % outer_stride) / inner : k / (weights->size() / channels);
      (*weights)[k] *= factor[c];
    }
    set_float_values(w, *weights);
    std::vector<float> b(channels);
    for (std::size_t c = 0; c < channels; ++c) b[c] = ((bias ? (*bias)[c] : 0.0f) - (*mean)[c]) * factor[c] + (*shift)[c];
    if (bias) {
      set_float_values(*init[conv.input(2)], b);
    } else {
      onnx::TensorProto* t = g.add_initializer();
      t->set_name(conv.input(1) + "_folded_bias");
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(static_cast<std::int64_t>(channels));
      set_float_values(*t, b);
      while (conv.input_size() < 3) conv.add_input("");
      conv.set_input(2, t->name());
    }
    // The convolution now writes what the normalisation wrote.
    removed.insert(conv.output(0));
    conv.set_output(0, bn.output(0));
    folded.insert(&bn);
    ++count;
  }
  if (count == 0) return 0;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& n : *g.mutable_node()) {
    if (!folded.count(&n)) *kept.Add() = std::move(n);
  }
  g.mutable_node()->Swap(&kept);
  // Normalisation parameters nothing reads any more.
  std::set<std::string> read;
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) read.insert(i);
  }
  for (const auto& o : g.output()) read.insert(o.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  for (auto& t : *g.mutable_initializer()) {
    if (read.count(t.name())) *initializers.Add() = std::move(t);
  }
  g.mutable_initializer()->Swap(&initializers);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (auto& v : *g.mutable_value_info()) {
    if (!removed.count(v.name())) *infos.Add() = std::move(v);
  }
  g.mutable_value_info()->Swap(&infos);
  return count;
}

}  // namespace rung
