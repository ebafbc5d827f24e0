// What the QDQ plan (qdq_plan.cpp) and the rewrite (qdq_rewrite.cpp) both read of a
// graph: which tensors are float, initializers, inputs, outputs, who makes and who
// reads each tensor, and which inputs of a node carry data. Internal to quantise/.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rung::qdq {

using onnx::TensorProto;

inline bool has_weights(const std::string& op) { return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul"; }
inline bool joins_inputs(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Concat" || op == "Sum" || op == "Max" || op == "Min" ||
         op == "PRelu";
}

// The inputs of a quantised node that carry data (and so get quantised): shape,
// axes, scales, clip bounds and the like stay as they are.
inline std::vector<int> data_inputs(const onnx::NodeProto& n) {
  std::vector<int> out;
  const std::string& op = n.op_type();
  const int count = has_weights(op) ? std::min(n.input_size(), op == "MatMul" ? 2 : 3) : joins_inputs(op) ? n.input_size() : std::min(n.input_size(), 1);
  for (int i = 0; i < count; ++i) {
    if (!n.input(i).empty()) out.push_back(i);
  }
  return out;
}

struct Graph {
  std::map<std::string, int> elem_type;                 // every tensor whose type is known
  std::map<std::string, const TensorProto*> initializer;
  std::set<std::string> inputs, outputs;
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers;
  std::map<std::string, const onnx::NodeProto*> producer;

  explicit Graph(const onnx::GraphProto& g) {
    for (const auto& v : g.input()) elem_type[v.name()] = v.type().tensor_type().elem_type(), inputs.insert(v.name());
    for (const auto& v : g.value_info()) elem_type[v.name()] = v.type().tensor_type().elem_type();
    for (const auto& v : g.output()) elem_type[v.name()] = v.type().tensor_type().elem_type(), outputs.insert(v.name());
    for (const auto& t : g.initializer()) {
      elem_type[t.name()] = t.data_type();
      initializer[t.name()] = &t;
      inputs.erase(t.name());  // an initializer listed as an input (IR < 4) is a weight
    }
    for (const auto& n : g.node()) {
      for (const auto& i : n.input()) consumers[i].push_back(&n);
      for (const auto& o : n.output()) producer[o] = &n;
    }
  }
  bool is_float(const std::string& t) const {
    auto it = elem_type.find(t);
    return it != elem_type.end() && it->second == TensorProto::FLOAT;
  }
  bool is_initializer(const std::string& t) const { return initializer.count(t) > 0; }
};

}  // namespace rung::qdq
