#include "quantise/bias_correction.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <map>

#include "graph/tensor_data.h"
#include "quantise/calibration.h"
#include "quantise/cpu_session.h"
#include "session/session.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTwin = "__rounded";  // suffix of a twin node's name and output

// The axis of a node's output that counts its channels: NCHW for convolutions,
// [M, N] for a Gemm, [..., N] for a MatMul.
int output_channel_axis(const std::string& op, std::size_t rank) {
  if (op == "MatMul") return static_cast<int>(rank) - 1;
  return 1;
}

}  // namespace

Result<std::vector<ChannelShift>> measure_rounding_shifts(OrtProcess& process, const onnx::ModelProto& prepared, const onnx::ModelProto& rounded,
                                                          const std::set<std::string>& nodes, const std::vector<InputItem>& items,
                                                          const InputPlan& input_plan, int threads, const fs::path& work) {
  // The float graph, plus what makes the rounded weights (constants only, so first), plus a twin of each node reading them.
  onnx::ModelProto twin = prepared;
  onnx::GraphProto& g = *twin.mutable_graph();
  std::set<std::string> have_node, have_init;
  for (const auto& n : prepared.graph().node()) have_node.insert(n.name());
  for (const auto& t : prepared.graph().initializer()) have_init.insert(t.name());
  for (const auto& t : rounded.graph().initializer()) {
    if (!have_init.count(t.name())) *g.add_initializer() = t;
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> ordered;
  std::map<std::string, const onnx::NodeProto*> rounded_node;
  for (const auto& n : rounded.graph().node()) {
    rounded_node[n.name()] = &n;
    if (!have_node.count(n.name())) *ordered.Add() = n;
  }
  for (const auto& n : prepared.graph().node()) *ordered.Add() = n;
  std::vector<std::string> exposed;
  std::map<std::string, std::string> op_of;
  for (const auto& n : prepared.graph().node()) {
    auto r = rounded_node.find(n.name());
    if (!nodes.count(n.name()) || n.output_size() < 1 || n.input_size() < 2 || r == rounded_node.end() || r->second->input_size() < 2) continue;
    // The float node with its outputs renamed, reading the rounded weight: its data and bias are the float graph's.
    onnx::NodeProto copy = n;
    copy.set_name(n.name() + kTwin);
    for (int i = 0; i < copy.output_size(); ++i) copy.set_output(i, n.output(i) + kTwin);
    copy.set_input(1, r->second->input(1));
    *ordered.Add() = std::move(copy);
    exposed.push_back(n.output(0));
    exposed.push_back(n.output(0) + kTwin);
    op_of[n.name()] = n.op_type();
  }
  g.mutable_node()->Swap(&ordered);
  auto session = open_exposed_on_cpu(process, twin, exposed, work / "bias-twins.onnx", threads);
  if (!session) return session.error();

  struct Sums {
    std::vector<double> diff;
    std::uint64_t per_channel = 0;
  };
  std::map<std::string, Sums> sums;  // by node
  std::map<std::string, std::string> node_of_output;
  for (const auto& n : prepared.graph().node()) {
    if (op_of.count(n.name())) node_of_output[n.output(0)] = n.name();
  }
  for (const auto& item : items) {
    auto inputs = calibration_tensors(item, session->io, input_plan);
    if (!inputs) return inputs.error();
    std::map<std::string, const TensorView*> by_name;
    Status visited = run_session_visiting(*session, *inputs, [&](const std::vector<TensorView>& outs) -> Status {
      for (const auto& t : outs) by_name[std::string(t.name)] = &t;
      for (const auto& [output, node] : node_of_output) {
        auto f = by_name.find(output);
        auto r = by_name.find(output + kTwin);
        if (f == by_name.end() || r == by_name.end() || f->second->type != ElementType::kFloat || f->second->shape != r->second->shape) {
          return Error{ErrorCode::kRuntime, fmt::format("node '{}': its output and its twin's do not compare", node)};
        }
        const auto& shape = f->second->shape;
        const int axis = output_channel_axis(op_of[node], shape.size());
        if (axis < 0 || static_cast<std::size_t>(axis) >= shape.size()) continue;
        const auto channels = static_cast<std::size_t>(shape[static_cast<std::size_t>(axis)]);
        std::size_t inner = 1;
        for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= static_cast<std::size_t>(shape[d]);
        const auto* a = reinterpret_cast<const float*>(f->second->bytes.data());
        const auto* b = reinterpret_cast<const float*>(r->second->bytes.data());
        const std::size_t count = f->second->bytes.size() / sizeof(float);
        Sums& s = sums[node];
        if (s.diff.empty()) s.diff.assign(channels, 0.0);
        if (s.diff.size() != channels) return Error{ErrorCode::kRuntime, fmt::format("node '{}': its channel count changed between inputs", node)};
        for (std::size_t k = 0; k < count; ++k) s.diff[(k / inner) % channels] += static_cast<double>(b[k]) - a[k];
        s.per_channel += channels == 0 ? 0 : count / channels;
      }
      return {};
    });
    if (!visited) return Error{visited.error().code, fmt::format("input {}: {}", item.name, visited.error().message)};
  }
  std::vector<ChannelShift> out;
  for (auto& [node, s] : sums) {
    if (s.per_channel == 0) continue;
    for (double& d : s.diff) d /= static_cast<double>(s.per_channel);
    out.push_back({node, std::move(s.diff)});
  }
  return out;
}

BiasCorrection correct_biases(onnx::ModelProto& prepared, const std::vector<ChannelShift>& shifts) {
  onnx::GraphProto& g = *prepared.mutable_graph();
  std::map<std::string, onnx::TensorProto*> init;
  for (auto& t : *g.mutable_initializer()) init[t.name()] = &t;
  std::map<std::string, int> readers;
  std::map<std::string, onnx::NodeProto*> reader;  // the last node reading each tensor
  for (auto& n : *g.mutable_node()) {
    for (const auto& i : n.input()) ++readers[i], reader[i] = &n;
  }
  // A MatMul's bias is the Add after it, where that Add alone reads the MatMul and adds one constant value per channel.
  auto following_bias = [&](const onnx::NodeProto& n) -> std::string {
    if (n.output_size() < 1 || readers[n.output(0)] != 1) return "";
    const onnx::NodeProto* add = reader[n.output(0)];
    if (add->op_type() != "Add" || add->input_size() != 2) return "";
    const std::string& other = add->input(0) == n.output(0) ? add->input(1) : add->input(0);
    return init.count(other) ? other : "";
  };
  std::map<std::string, const ChannelShift*> by_node;
  for (const auto& s : shifts) by_node[s.node] = &s;
  BiasCorrection done;
  for (auto& n : *g.mutable_node()) {
    auto s = by_node.find(n.name());
    if (s == by_node.end()) continue;
    const std::vector<double>& shift = s->second->mean;
    const std::string& op = n.op_type();
    float scale = 1.0f;  // a Gemm adds beta x C
    bool correctable = op == "Conv" || op == "ConvTranspose" || op == "Gemm";
    for (const auto& a : n.attribute()) {
      if (op == "Gemm" && a.name() == "beta") scale = a.f();
    }
    std::vector<float> bias(shift.size(), 0.0f);
    const std::string after = op == "MatMul" ? following_bias(n) : "";
    const bool has_bias = !after.empty() || (n.input_size() > 2 && !n.input(2).empty());
    const std::string bias_name = !after.empty() ? after : has_bias ? n.input(2) : "";
    correctable = correctable || !after.empty();
    if (correctable && has_bias) {
      // Only a constant bias holding one value per channel, read by this node alone, takes a per-channel correction.
      auto it = init.find(bias_name);
      auto values = it != init.end() ? float_values(*it->second) : Result<std::vector<float>>(std::vector<float>{});
      correctable = values && values->size() == shift.size() && readers[bias_name] == 1 && scale != 0.0f;
      if (correctable) bias = *values;
    }
    if (!correctable) {
      ++done.uncorrected;
      continue;
    }
    for (std::size_t c = 0; c < bias.size(); ++c) bias[c] -= static_cast<float>(shift[c] / scale);
    if (has_bias) {
      set_float_values(*init.at(bias_name), bias);
    } else {
      onnx::TensorProto& t = *g.add_initializer();
      t.set_name(n.name() + "_corrected_bias");
      t.set_data_type(onnx::TensorProto::FLOAT);
      t.add_dims(static_cast<std::int64_t>(bias.size()));
      set_float_values(t, bias);
      if (n.input_size() == 2) n.add_input(t.name());  // a weighted node has its data and weight: the bias is third
      else n.set_input(2, t.name());
    }
    ++done.nodes;
  }
  return done;
}

}  // namespace rung
