// Who writes and who reads each tensor of a graph, and its initializers by
// name: what the preparation rewrites (conv_fold, activation_fold) look up.
// Pointers into the graph: rebuilt after the graph's nodes move.
#pragma once

#include <map>
#include <set>
#include <string>

namespace onnx {
class GraphProto;
class NodeProto;
class TensorProto;
}  // namespace onnx

namespace rung {

struct GraphIndex {
  std::map<std::string, onnx::TensorProto*> init;
  std::map<std::string, int> uses;  // readers, a graph output counting as one
  std::map<std::string, onnx::NodeProto*> producer;

  explicit GraphIndex(onnx::GraphProto& graph);
};

// Removes `nodes`, then the initializers nothing reads any more.
void drop_nodes(onnx::GraphProto& graph, const std::set<const onnx::NodeProto*>& nodes);

}  // namespace rung
