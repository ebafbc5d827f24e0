// The QDQ rewrite: a plan and its ranges made into a graph: QuantizeLinear and
// DequantizeLinear pairs on converted activations, quantised weights and biases,
// saturating rewrites of hard activations, unused initializers dropped.
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

enum class Role { kActivation, kWeight, kBias };

Role role_of(const onnx::NodeProto& n, int index, const Graph& g) {
  if (!has_weights(n.op_type()) || !g.is_initializer(n.input(index))) return Role::kActivation;
  if (index == 1) return Role::kWeight;
  // A bias is int32 at the weight's scales: only beside a quantised weight.
  if (index == 2 && g.is_initializer(n.input(1)) && g.initializer.at(n.input(index))->dims_size() == 1) return Role::kBias;
  return Role::kActivation;
}

// --- numbers ----------------------------------------------------------------

struct QType {
  int onnx_type;
  std::int64_t qmin, qmax;
  std::size_t bytes;
};

QType qtype(int bits, bool is_signed) {
  if (bits == 8) return is_signed ? QType{TensorProto::INT8, -128, 127, 1} : QType{TensorProto::UINT8, 0, 255, 1};
  return is_signed ? QType{TensorProto::INT16, -32768, 32767, 2} : QType{TensorProto::UINT16, 0, 65535, 2};
}

bool needs_contrib_domain(const QType& t) { return t.bytes == 2; }

struct Affine {
  float scale = 1;
  std::int64_t zero_point = 0;
};

// Asymmetric: the range (which includes zero) spread over every level.
Affine affine_for(Range r, const QType& t) {
  const double levels = static_cast<double>(t.qmax - t.qmin);
  double scale = (r.hi - r.lo) / levels;
  if (!(scale > std::numeric_limits<float>::min()) || !std::isfinite(scale)) scale = 1.0;  // a tensor that is always zero
  const auto zp = static_cast<std::int64_t>(std::llround(static_cast<double>(t.qmin) - r.lo / scale));
  return {static_cast<float>(scale), std::clamp(zp, t.qmin, t.qmax)};
}

void append_integer(std::string& raw, std::int64_t v, std::size_t bytes) {
  // ONNX raw_data is little-endian, as is every machine ONNX Runtime runs on here.
  if (bytes == 1) raw.push_back(static_cast<char>(static_cast<std::int8_t>(v)));
  if (bytes == 2) {
    const auto w = static_cast<std::int16_t>(v);
    raw.append(reinterpret_cast<const char*>(&w), 2);
  }
  if (bytes == 4) {
    const auto w = static_cast<std::int32_t>(v);
    raw.append(reinterpret_cast<const char*>(&w), 4);
  }
}

// --- the rewrite ------------------------------------------------------------

void set_axis(onnx::NodeProto& n, std::int64_t axis) {
  auto* a = n.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
}

class Rewriter {
 public:
  Rewriter(onnx::ModelProto& model, const QdqPlan& plan, const std::map<std::string, Range>& ranges, const QdqSettings& s)
      : model_(model), g_(model.graph()), plan_(plan), ranges_(ranges), s_(s) {
    act_ = qtype(activation_bits(s.form), s.signed_activations);
    weight_ = qtype(weight_bits(s.form), true);
    if (s.reduce_range && weight_.bytes == 1) weight_.qmax = 63;
    constant_ = qtype(weight_bits(s.form), s.signed_activations);
  }

  Result<QdqCounts> run() {
    onnx::GraphProto& graph = *model_.mutable_graph();
    for (const auto& t : plan_.activations) {
      auto r = ranges_.find(t);
      if (r == ranges_.end()) return Error{ErrorCode::kInvalidArgument, fmt::format("no calibrated range for tensor '{}'", t)};
      Activation a;
      a.affine = affine_for(r->second, act_);
      auto made_by = g_.producer.find(t);
      if (g_.outputs.count(t) && made_by != g_.producer.end() && plan_.quantised.count(made_by->second->name())) {
        a.source = t + "_float";  // a quantised node's graph output is the dequantised value, under its own name
        a.dequantised = t;
      } else {
        a.source = t;
        a.dequantised = t + "_dq";
      }
      a.codes = t + "_q";
      acts_[t] = a;
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (const auto& in : graph.input()) {
      if (acts_.count(in.name())) emit_pair(nodes, in.name());
    }
    for (const auto& original : graph.node()) {
      onnx::NodeProto n = original;
      // A folded activation reads the float tensor its quantised producer writes: ONNX Runtime folds the two.
      const bool quantised = plan_.quantised.count(n.name()) > 0 && !plan_.folded.count(n.name());
      if (quantised && kernel_rule(s_.target, n.op_type()).kind == KernelKind::kSaturating) {
        RUNG_RETURN_IF_ERROR(saturating(nodes, original));
        continue;
      }
      const std::vector<int> data = !quantised ? std::vector<int>{} : weights_only(s_.form) ? std::vector<int>{1} : data_inputs(n);
      for (int i = 0; i < n.input_size(); ++i) {
        const std::string& t = original.input(i);
        if (t.empty()) continue;
        if (std::find(data.begin(), data.end(), i) == data.end()) {
          // A float node reads what the integer pipeline computed, through the one DequantizeLinear: the quantised
          // node's float output then feeds its QuantizeLinear alone, and the target can fuse the two.
          if (auto a = acts_.find(t); a != acts_.end()) {
            const std::int64_t channels = i == 0 && !quantised ? float_weighted_channels(original) : 0;
            n.set_input(i, channels > 0 ? per_channel_reader(nodes, t, channels, gemm_reads_transposed(original) ? 0 : 1)
                                        : a->second.dequantised);
          }
          continue;
        }
        auto replaced = quantised_input(nodes, original, i);
        if (!replaced) return replaced.error();
        n.set_input(i, *replaced);
      }
      for (int o = 0; o < n.output_size(); ++o) {
        if (auto a = acts_.find(n.output(o)); a != acts_.end()) n.set_output(o, a->second.source);
      }
      *nodes.Add() = std::move(n);
      for (const auto& out : original.output()) {
        if (acts_.count(out)) emit_pair(nodes, out);
      }
    }
    graph.mutable_node()->Swap(&nodes);
    for (auto& t : added_) *graph.add_initializer() = std::move(t);
    drop_unused_initializers(graph);
    graph.clear_value_info();  // renamed tensors: ONNX Runtime infers the rest again
    if (contrib_) {
      bool present = false;
      for (const auto& o : model_.opset_import()) present = present || o.domain() == "com.microsoft";
      if (!present) {
        auto* o = model_.add_opset_import();
        o->set_domain("com.microsoft");
        o->set_version(1);
      }
    }
    counts_.activations = acts_.size();
    return counts_;
  }

 private:
  struct Activation {
    Affine affine;
    std::string source, dequantised;
    std::string codes;  // the QuantizeLinear's output
  };

  std::string add_scalar(const std::string& name, float v) {
    TensorProto t;
    t.set_name(name);
    t.set_data_type(TensorProto::FLOAT);
    t.add_float_data(v);
    added_.push_back(std::move(t));
    return name;
  }
  std::string add_integers(const std::string& name, const QType& type, const std::vector<std::int64_t>& values, bool vector) {
    TensorProto t;
    t.set_name(name);
    t.set_data_type(type.onnx_type);
    if (vector) t.add_dims(static_cast<std::int64_t>(values.size()));
    std::string raw;
    raw.reserve(values.size() * type.bytes);
    for (auto v : values) append_integer(raw, v, type.bytes);
    t.set_raw_data(std::move(raw));
    added_.push_back(std::move(t));
    return name;
  }
  std::string add_floats(const std::string& name, const std::vector<float>& values) {
    TensorProto t;
    t.set_name(name);
    t.set_data_type(TensorProto::FLOAT);
    t.add_dims(static_cast<std::int64_t>(values.size()));
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    added_.push_back(std::move(t));
    return name;
  }

  onnx::NodeProto& add_node(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& op, const QType& type,
                            std::vector<std::string> inputs, const std::string& output) {
    onnx::NodeProto& n = *nodes.Add();
    n.set_op_type(op);
    n.set_name(output + "_" + op);
    if (needs_contrib_domain(type)) {
      n.set_domain("com.microsoft");
      contrib_ = true;
    }
    for (auto& i : inputs) n.add_input(i);
    n.add_output(output);
    return n;
  }

  void add_float_node(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& op, const std::string& name,
                      std::vector<std::string> inputs, const std::string& output) {
    onnx::NodeProto& n = *nodes.Add();
    n.set_op_type(op);
    n.set_name(name);
    for (auto& i : inputs) n.add_input(i);
    n.add_output(output);
  }

  // ONNX Runtime quantises the float weights of a Conv, ConvTranspose or Gemm
  // that reads a per-tensor DequantizeLinear (its WeightBiasQuantization pass:
  // int8, one scale for the whole tensor), so a node kept float would silently
  // run on weights coarser than any form rung writes. Such a node reads the
  // codes through a DequantizeLinear of its own with the same scale repeated
  // per channel, which that pass leaves alone. Returns the input's channel
  // count, or 0 for a node that pass would not touch.
  std::int64_t float_weighted_channels(const onnx::NodeProto& n) const {
    const std::string& op = n.op_type();
    if (!n.domain().empty() || (op != "Conv" && op != "ConvTranspose" && op != "Gemm") || n.input_size() < 2) return 0;
    auto w = g_.initializer.find(n.input(1));
    if (w == g_.initializer.end() || w->second->data_type() != TensorProto::FLOAT || w->second->dims_size() < 2) return 0;
    const TensorProto& t = *w->second;
    std::int64_t group = 1;
    bool trans_b = false;
    for (const auto& a : n.attribute()) {
      if (a.name() == "group") group = a.i();
      if (a.name() == "transB") trans_b = a.i() != 0;
    }
    if (op == "Conv") return t.dims(1) * group;
    if (op == "ConvTranspose") return t.dims(0);
    return trans_b ? t.dims(1) : t.dims(0);  // Gemm: K
  }
  static bool gemm_reads_transposed(const onnx::NodeProto& n) {
    if (n.op_type() != "Gemm") return false;
    for (const auto& a : n.attribute()) {
      if (a.name() == "transA") return a.i() != 0;
    }
    return false;
  }

  std::string per_channel_reader(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& t, std::int64_t channels,
                                 int axis) {
    const std::string out = fmt::format("{}_dq_axis{}_{}", t, axis, channels);
    if (!per_channel_readers_.insert(out).second) return out;
    const Activation& a = acts_.at(t);
    const auto count = static_cast<std::size_t>(channels);
    const std::string scale = add_floats(out + "_scale", std::vector<float>(count, a.affine.scale));
    const std::string zp = add_integers(out + "_zero_point", act_, std::vector<std::int64_t>(count, a.affine.zero_point), true);
    auto& dq = add_node(nodes, "DequantizeLinear", act_, {a.codes, scale, zp}, out);
    set_axis(dq, axis);
    return out;
  }

  void emit_pair(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& t) {
    const Activation& a = acts_.at(t);
    const std::string scale = add_scalar(t + "_scale", a.affine.scale);
    const std::string zp = add_integers(t + "_zero_point", act_, {a.affine.zero_point}, false);
    add_node(nodes, "QuantizeLinear", act_, {a.source, scale, zp}, t + "_q");
    add_node(nodes, "DequantizeLinear", act_, {t + "_q", scale, zp}, a.dequantised);
  }

  // The tensor a quantised node reads at input `i` in place of the float one.
  Result<std::string> quantised_input(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const onnx::NodeProto& n, int i) {
    const std::string& t = n.input(i);
    if (auto a = acts_.find(t); a != acts_.end()) return a->second.dequantised;
    if (!g_.is_initializer(t)) return Error{ErrorCode::kInvalidArgument, fmt::format("node '{}': input '{}' was not planned for quantisation", n.name(), t)};
    switch (role_of(n, i, g_)) {
      case Role::kWeight: return weight(nodes, n);
      case Role::kBias: return bias(nodes, n);
      case Role::kActivation: return constant(nodes, t);
    }
    return t;
  }

  // A float initializer a joining node reads (a constant to add, multiply by):
  // per tensor, asymmetric, at the weights' width.
  Result<std::string> constant(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& t) {
    if (auto it = constants_.find(t); it != constants_.end()) return it->second;
    auto values = float_values(*g_.initializer.at(t));
    if (!values) return values.error();
    return constants_[t] = quantised_constant(nodes, t, *values, g_.initializer.at(t)->dims());
  }

  std::string quantised_constant(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& t,
                                 const std::vector<float>& values, const google::protobuf::RepeatedField<std::int64_t>& dims) {
    Range r;
    for (float v : values) r.lo = std::min(r.lo, static_cast<double>(v)), r.hi = std::max(r.hi, static_cast<double>(v));
    const Affine a = affine_for(r, constant_);
    std::vector<std::int64_t> q(values.size());
    for (std::size_t k = 0; k < q.size(); ++k) {
      q[k] = std::clamp<std::int64_t>(std::llround(values[k] / a.scale) + a.zero_point, constant_.qmin, constant_.qmax);
    }
    TensorProto quantised;
    quantised.set_name(t + "_quantized");
    quantised.set_data_type(constant_.onnx_type);
    *quantised.mutable_dims() = dims;
    std::string raw;
    for (auto v : q) append_integer(raw, v, constant_.bytes);
    quantised.set_raw_data(std::move(raw));
    added_.push_back(std::move(quantised));
    const std::string scale = add_scalar(t + "_quantized_scale", a.scale);
    const std::string zp = add_integers(t + "_quantized_zero_point", constant_, {a.zero_point}, false);
    add_node(nodes, "DequantizeLinear", constant_, {t + "_quantized", scale, zp}, t + "_dq");
    ++counts_.constants;
    return t + "_dq";
  }

  // HardSigmoid(x) = clip(alpha x + beta, 0, 1) = alpha clip(x + beta/alpha, 0, 1/alpha): an Add whose output is
  // quantised over [0, 1/alpha] (the codes saturate where the clip would) and read back at alpha times that scale,
  // which is the [0, 1] scale of the activation's output. HardSwish(x) = x HardSigmoid(x) adds a Mul. The target
  // fuses DQ -> Add -> Q into its integer Add and DQ -> Mul -> Q into its integer Mul: no float node, no conversion.
  Status saturating(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const onnx::NodeProto& n) {
    const bool swish = n.op_type() == "HardSwish";
    float alpha = swish ? 1.0f / 6.0f : 0.2f, beta = 0.5f;
    for (const auto& a : n.attribute()) {
      if (!swish && a.name() == "alpha") alpha = a.f();
      if (!swish && a.name() == "beta") beta = a.f();
    }
    auto x = acts_.find(n.input(0));
    auto y = acts_.find(n.output(0));
    if (x == acts_.end() || y == acts_.end() || !(alpha > 0) || !std::isfinite(beta / alpha)) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("node '{}': {} without a quantised input and output, or with alpha {}", n.name(),
                                                            n.op_type(), alpha)};
    }
    const std::string base = n.output(0);
    const std::string offset = quantised_constant(nodes, base + "_offset", {beta / alpha}, {});
    add_float_node(nodes, "Add", n.name(), {x->second.dequantised, offset}, base + "_shifted");
    // The gate's [0, 1] scale: the output's own (a HardSigmoid's range is [0, 1] by construction), or a fresh one.
    const Affine gate = swish ? affine_for(Range{0, 1}, act_) : y->second.affine;
    const std::string gate_dq = swish ? base + "_gate" : y->second.dequantised;
    const std::string shifted_scale = add_scalar(base + "_shifted_scale", gate.scale / alpha);
    const std::string gate_scale = add_scalar(base + "_gate_scale", gate.scale);
    const std::string zp = add_integers(base + "_gate_zero_point", act_, {gate.zero_point}, false);
    add_node(nodes, "QuantizeLinear", act_, {base + "_shifted", shifted_scale, zp}, base + "_gate_q");
    add_node(nodes, "DequantizeLinear", act_, {base + "_gate_q", gate_scale, zp}, gate_dq);
    if (!swish) y->second.codes = base + "_gate_q";
    if (swish) {
      add_float_node(nodes, "Mul", n.name() + "_mul", {x->second.dequantised, gate_dq}, y->second.source);
      emit_pair(nodes, n.output(0));
    }
    ++counts_.saturated;
    return {};
  }

  // The axis of a weight that indexes output channels, or -1 for per-tensor.
  int channel_axis(const onnx::NodeProto& n, const TensorProto& w) const {
    if (!s_.per_channel || w.dims_size() < 1) return -1;
    const std::string& op = n.op_type();
    if (op == "Conv") return 0;
    if (op == "ConvTranspose") {
      for (const auto& a : n.attribute()) {
        if (a.name() == "group" && a.i() != 1) return -1;  // its axis 1 counts channels per group: no match for the bias
      }
      return w.dims_size() >= 2 ? 1 : -1;
    }
    if (op == "Gemm") {
      for (const auto& a : n.attribute()) {
        if (a.name() == "transB" && a.i() != 0) return 0;
      }
      return 1;
    }
    return w.dims_size() - 1;  // MatMul: B is [..., K, N]
  }

  struct WeightScales {
    std::vector<float> scales;  // one per channel, or one
    int axis = -1;
  };

  // Symmetric scales: the largest magnitude of each channel maps to the top level.
  WeightScales weight_scales(const onnx::NodeProto& n, const TensorProto& w, const std::vector<float>& v) const {
    WeightScales s;
    s.axis = channel_axis(n, w);
    const std::size_t channels = s.axis < 0 ? 1 : static_cast<std::size_t>(w.dims(s.axis));
    std::size_t inner = 1;
    for (int d = s.axis + 1; s.axis >= 0 && d < w.dims_size(); ++d) inner *= static_cast<std::size_t>(w.dims(d));
    std::vector<float> peak(channels, 0.0f);
    for (std::size_t k = 0; k < v.size(); ++k) {
      const std::size_t c = s.axis < 0 ? 0 : (k / inner) % channels;
      peak[c] = std::max(peak[c], std::fabs(v[k]));
    }
    s.scales.resize(channels);
    for (std::size_t c = 0; c < channels; ++c) s.scales[c] = peak[c] > 0 ? peak[c] / static_cast<float>(weight_.qmax) : 1.0f;
    return s;
  }

  // Raises weight scales until the bias, at input scale x weight scale, fits in int32.
  void fit_bias(const onnx::NodeProto& n, WeightScales& ws) {
    if (weights_only(s_.form)) return;  // the bias stays float
    if (n.input_size() < 3 || n.input(2).empty() || role_of(n, 2, g_) != Role::kBias) return;
    auto b = float_values(*g_.initializer.at(n.input(2)));
    if (!b) return;  // reported when the bias itself is quantised
    const float input_scale = acts_.at(n.input(0)).affine.scale;
    constexpr double kLimit = 2147483647.0 * 0.999;
    for (std::size_t c = 0; c < b->size(); ++c) {
      float& s = ws.scales[ws.scales.size() == 1 ? 0 : std::min(c, ws.scales.size() - 1)];
      const double needed = std::fabs((*b)[c]) / (static_cast<double>(input_scale) * kLimit);
      if (needed > s) {
        s = static_cast<float>(needed);
        ++counts_.raised_scales;
      }
    }
  }

  Result<std::string> weight(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const onnx::NodeProto& n) {
    const TensorProto& w = *g_.initializer.at(n.input(1));
    auto v = float_values(w);
    if (!v) return v.error();
    WeightScales ws = weight_scales(n, w, *v);
    fit_bias(n, ws);
    const std::size_t channels = ws.scales.size();
    std::size_t inner = 1;
    for (int d = ws.axis + 1; ws.axis >= 0 && d < w.dims_size(); ++d) inner *= static_cast<std::size_t>(w.dims(d));
    std::string raw;
    raw.reserve(v->size() * weight_.bytes);
    for (std::size_t k = 0; k < v->size(); ++k) {
      const float s = ws.scales[ws.axis < 0 ? 0 : (k / inner) % channels];
      append_integer(raw, std::clamp<std::int64_t>(std::llround((*v)[k] / s), -weight_.qmax, weight_.qmax), weight_.bytes);
    }
    const std::string base = fmt::format("{}_{}", w.name(), n.name());
    TensorProto q;
    q.set_name(base + "_quantized");
    q.set_data_type(weight_.onnx_type);
    *q.mutable_dims() = w.dims();
    q.set_raw_data(std::move(raw));
    added_.push_back(std::move(q));
    const bool vector = ws.axis >= 0;
    if (weights_only(s_.form)) {
      ++counts_.weights;
      return float_weight(nodes, base, ws, w.dims_size());
    }
    const std::string scale = vector ? add_floats(base + "_scale", ws.scales) : add_scalar(base + "_scale", ws.scales[0]);
    const std::string zp = add_integers(base + "_zero_point", weight_, std::vector<std::int64_t>(channels, 0), vector);
    auto& dq = add_node(nodes, "DequantizeLinear", weight_, {base + "_quantized", scale, zp}, base + "_dq");
    if (vector) set_axis(dq, ws.axis);
    weight_scales_[n.name()] = std::move(ws.scales);
    ++counts_.weights;
    return base + "_dq";
  }

  // w8: the int8 weight cast to float and multiplied by its scales, shaped [channels, 1, ...] so they broadcast
  // along its channel axis. All constant: ONNX Runtime folds the two nodes away when it builds the session.
  std::string float_weight(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const std::string& base, const WeightScales& ws, int rank) {
    const std::string scale = ws.axis < 0 ? add_scalar(base + "_scale", ws.scales[0]) : add_floats(base + "_scale", ws.scales);
    for (int d = ws.axis + 1; ws.axis >= 0 && d < rank; ++d) added_.back().add_dims(1);
    add_float_node(nodes, "Cast", base + "_cast", {base + "_quantized"}, base + "_cast");
    auto* to = nodes.rbegin()->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(TensorProto::FLOAT);
    add_float_node(nodes, "Mul", base + "_scaled", {base + "_cast", scale}, base + "_scaled");
    return base + "_scaled";
  }

  // int32 at input scale x weight scale, zero point 0: what integer kernels add to their accumulators.
  Result<std::string> bias(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const onnx::NodeProto& n) {
    const TensorProto& b = *g_.initializer.at(n.input(2));
    auto v = float_values(b);
    if (!v) return v.error();
    auto ws = weight_scales_.find(n.name());
    if (ws == weight_scales_.end()) return Error{ErrorCode::kInvalidArgument, fmt::format("node '{}': a bias without a quantised weight", n.name())};
    const float input_scale = acts_.at(n.input(0)).affine.scale;
    const bool vector = ws->second.size() > 1;
    if (vector && ws->second.size() != v->size()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("node '{}': {} weight channels but {} bias values", n.name(), ws->second.size(), v->size())};
    }
    std::vector<float> scales(vector ? v->size() : 1);
    for (std::size_t c = 0; c < scales.size(); ++c) scales[c] = input_scale * ws->second[vector ? c : 0];
    std::string raw;
    for (std::size_t c = 0; c < v->size(); ++c) {
      const double q = std::round(static_cast<double>((*v)[c]) / scales[vector ? c : 0]);
      append_integer(raw, static_cast<std::int64_t>(std::clamp(q, -2147483648.0, 2147483647.0)), 4);
    }
    const std::string base = fmt::format("{}_{}", b.name(), n.name());
    TensorProto q;
    q.set_name(base + "_quantized");
    q.set_data_type(TensorProto::INT32);
    *q.mutable_dims() = b.dims();
    q.set_raw_data(std::move(raw));
    added_.push_back(std::move(q));
    const QType int32{TensorProto::INT32, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), 4};
    const std::string scale = vector ? add_floats(base + "_scale", scales) : add_scalar(base + "_scale", scales[0]);
    const std::string zp = add_integers(base + "_zero_point", int32, std::vector<std::int64_t>(scales.size(), 0), vector);
    auto& dq = add_node(nodes, "DequantizeLinear", int32, {base + "_quantized", scale, zp}, base + "_dq");
    if (vector) set_axis(dq, 0);
    ++counts_.biases;
    return base + "_dq";
  }

  void drop_unused_initializers(onnx::GraphProto& graph) {
    std::set<std::string> used;
    for (const auto& n : graph.node()) {
      for (const auto& i : n.input()) used.insert(i);
    }
    for (const auto& o : graph.output()) used.insert(o.name());
    google::protobuf::RepeatedPtrField<TensorProto> kept;
    for (auto& t : *graph.mutable_initializer()) {
      if (used.count(t.name())) *kept.Add() = std::move(t);
    }
    graph.mutable_initializer()->Swap(&kept);
  }

  onnx::ModelProto& model_;
  Graph g_;
  const QdqPlan& plan_;
  const std::map<std::string, Range>& ranges_;
  const QdqSettings& s_;
  QType act_{}, weight_{}, constant_{};
  std::map<std::string, Activation> acts_;
  std::map<std::string, std::string> constants_;
  std::set<std::string> per_channel_readers_;  // the per-channel DequantizeLinear outputs made so far
  std::map<std::string, std::vector<float>> weight_scales_;  // by node
  std::vector<TensorProto> added_;
  bool contrib_ = false;
  QdqCounts counts_;
};

}  // namespace

Result<QdqCounts> insert_qdq(onnx::ModelProto& model, const QdqPlan& plan, const std::map<std::string, Range>& ranges, const QdqSettings& s) {
  if (s.form == NumericForm::kF32 || s.form == NumericForm::kF16) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{} is not a quantised form", numeric_form_name(s.form))};
  }
  return Rewriter(model, plan, ranges, s).run();
}

}  // namespace rung
