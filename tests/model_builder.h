// Builds small ONNX models for tests (onnx::ModelProto from Debian's libonnx) and writes them to files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace rung::test {

// Element types accepted by ModelBuilder (values of onnx::TensorProto::DataType).
enum class ElemType : int32_t {
  Float = 1, Uint8 = 2, Int8 = 3, Uint16 = 4, Int16 = 5, Int32 = 6, Int64 = 7, String = 8, Bool = 9,
  Float16 = 10, Double = 11, Uint32 = 12, Uint64 = 13, BFloat16 = 16,
};

class ModelBuilder {
 public:
  // An ONNX model using the default domain at `opset` (IR version 8).
  explicit ModelBuilder(int64_t opset = 17);
  ~ModelBuilder();
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;

  // Graph inputs/outputs. A negative dimension becomes a symbolic one ("d<index>").
  ModelBuilder& input(const std::string& name, const std::vector<int64_t>& shape, ElemType type = ElemType::Float);
  ModelBuilder& output(const std::string& name, const std::vector<int64_t>& shape, ElemType type = ElemType::Float);
  // A sequence of tensors, or an optional tensor, of `type` and unknown shape.
  ModelBuilder& sequence_input(const std::string& name, ElemType type);
  ModelBuilder& sequence_output(const std::string& name, ElemType type);
  ModelBuilder& optional_input(const std::string& name, ElemType type);
  ModelBuilder& optional_output(const std::string& name, ElemType type);
  ModelBuilder& initializer(const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<float>& values);
  ModelBuilder& initializer_int64(const std::string& name, const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& values);
  // A node of the default domain; its name defaults to "<op_type>_<index>".
  ModelBuilder& node(const std::string& op_type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const std::string& name = "");
  // A node holding subgraphs (an If's branches, a Loop's body): attribute name -> the builder whose graph it holds.
  ModelBuilder& node(const std::string& op_type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs,
                     const std::vector<std::pair<std::string, const ModelBuilder*>>& subgraphs, const std::string& name = "");
  // A Constant node producing a float tensor.
  ModelBuilder& constant(const std::string& output, const std::vector<int64_t>& shape, const std::vector<float>& values);
  // Attributes of the node added last.
  ModelBuilder& attribute(const std::string& name, int64_t value);
  ModelBuilder& attribute(const std::string& name, const std::vector<int64_t>& values);
  ModelBuilder& attribute(const std::string& name, float value);

  std::string serialize() const;
  // Writes the model to `path` and returns it.
  std::filesystem::path save(const std::filesystem::path& path) const;

 private:
  std::unique_ptr<onnx::ModelProto> model_;
};

// y = Relu((x * 0.75 + 0.25) - x) over a float tensor of `shape`: every node one the
// simulated accelerator claims, so it can take the whole graph.
std::filesystem::path write_elementwise_model(const std::filesystem::path& path, const std::vector<int64_t>& shape);
// x[32,512] through three 512x512 MatMuls: heavy enough on the CPU that a
// memoising accelerator (the simulated one's memoise knob) is clearly faster.
std::filesystem::path write_matmul_chain_model(const std::filesystem::path& path);

// The model file as libonnx reads it.
onnx::ModelProto load_model(const std::filesystem::path& path);

// Op types and domains of the nodes of a serialized model file, as "domain:op_type" ("" domain for ONNX).
std::vector<std::string> model_node_ops(const std::filesystem::path& path);

// The string attribute `attr` of every node with op type `op_type` in a model file.
std::vector<std::string> model_string_attributes(const std::filesystem::path& path, const std::string& op_type,
                                                 const std::string& attr);

}  // namespace rung::test
