#include "quantise/graph_index.h"

#include <onnx/onnx_pb.h>

namespace rung {

GraphIndex::GraphIndex(onnx::GraphProto& g) {
  for (auto& t : *g.mutable_initializer()) init[t.name()] = &t;
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) ++uses[i];
  }
  for (const auto& o : g.output()) ++uses[o.name()];
  for (auto& n : *g.mutable_node()) {
    for (const auto& o : n.output()) producer[o] = &n;
  }
}

void drop_nodes(onnx::GraphProto& g, const std::set<const onnx::NodeProto*>& nodes) {
  if (nodes.empty()) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& n : *g.mutable_node()) {
    if (!nodes.count(&n)) *kept.Add() = std::move(n);
  }
  g.mutable_node()->Swap(&kept);
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
}

}  // namespace rung
