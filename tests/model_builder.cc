#include "model_builder.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <stdexcept>

namespace rung::test {

namespace {

void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& shape,
                    ElemType type) {
  vi->set_name(name);
  auto* tensor = vi->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(type));
  auto* s = tensor->mutable_shape();
  for (size_t i = 0; i < shape.size(); ++i) {
    auto* dim = s->add_dim();
    if (shape[i] < 0)
      dim->set_dim_param("d" + std::to_string(i));
    else
      dim->set_dim_value(shape[i]);
  }
}

// "sequence" or "optional" around a tensor of unknown shape.
void set_wrapped_info(onnx::ValueInfoProto* vi, const std::string& name, ElemType type, bool sequence) {
  vi->set_name(name);
  onnx::TypeProto* inner = sequence ? vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()
                                    : vi->mutable_type()->mutable_optional_type()->mutable_elem_type();
  inner->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(type));
}

onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : shape) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

}  // namespace

onnx::ModelProto load_model(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) throw std::runtime_error("cannot parse ONNX model " + path.string());
  return model;
}

ModelBuilder::ModelBuilder(int64_t opset) : model_(std::make_unique<onnx::ModelProto>()) {
  model_->set_ir_version(8);
  model_->set_producer_name("rung-tests");
  auto* op = model_->add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_->mutable_graph()->set_name("test_graph");
}

ModelBuilder::~ModelBuilder() = default;

ModelBuilder& ModelBuilder::input(const std::string& name, const std::vector<int64_t>& shape, ElemType type) {
  set_value_info(model_->mutable_graph()->add_input(), name, shape, type);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, const std::vector<int64_t>& shape, ElemType type) {
  set_value_info(model_->mutable_graph()->add_output(), name, shape, type);
  return *this;
}

ModelBuilder& ModelBuilder::sequence_input(const std::string& name, ElemType type) {
  set_wrapped_info(model_->mutable_graph()->add_input(), name, type, true);
  return *this;
}

ModelBuilder& ModelBuilder::sequence_output(const std::string& name, ElemType type) {
  set_wrapped_info(model_->mutable_graph()->add_output(), name, type, true);
  return *this;
}

ModelBuilder& ModelBuilder::optional_input(const std::string& name, ElemType type) {
  set_wrapped_info(model_->mutable_graph()->add_input(), name, type, false);
  return *this;
}

ModelBuilder& ModelBuilder::optional_output(const std::string& name, ElemType type) {
  set_wrapped_info(model_->mutable_graph()->add_output(), name, type, false);
  return *this;
}


ModelBuilder& ModelBuilder::initializer(const std::string& name, const std::vector<int64_t>& shape,
                                        const std::vector<float>& values) {
  *model_->mutable_graph()->add_initializer() = float_tensor(name, shape, values);
  return *this;
}

ModelBuilder& ModelBuilder::initializer_int64(const std::string& name, const std::vector<int64_t>& shape,
                                              const std::vector<int64_t>& values) {
  auto* t = model_->mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_INT64);
  for (int64_t d : shape) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name) {
  auto* graph = model_->mutable_graph();
  auto* n = graph->add_node();
  n->set_op_type(op_type);
  n->set_name(name.empty() ? op_type + "_" + std::to_string(graph->node_size() - 1) : name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *this;
}

ModelBuilder& ModelBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::vector<std::pair<std::string, const ModelBuilder*>>& subgraphs,
                                 const std::string& name) {
  node(op_type, inputs, outputs, name);
  auto* n = model_->mutable_graph()->mutable_node(model_->graph().node_size() - 1);
  for (const auto& [attribute, builder] : subgraphs) {
    auto* a = n->add_attribute();
    a->set_name(attribute);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = builder->model_->graph();
    a->mutable_g()->set_name(attribute);
  }
  return *this;
}

ModelBuilder& ModelBuilder::constant(const std::string& output, const std::vector<int64_t>& shape,
                                     const std::vector<float>& values) {
  node("Constant", {}, {output});
  auto* a = model_->mutable_graph()->mutable_node(model_->graph().node_size() - 1)->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = float_tensor(output, shape, values);
  return *this;
}

namespace {
onnx::AttributeProto* add_attribute(onnx::ModelProto& m, const std::string& name, onnx::AttributeProto::AttributeType type) {
  auto* graph = m.mutable_graph();
  if (graph->node_size() == 0) throw std::runtime_error("an attribute needs a node first");
  auto* a = graph->mutable_node(graph->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
}  // namespace

ModelBuilder& ModelBuilder::attribute(const std::string& name, int64_t value) {
  add_attribute(*model_, name, onnx::AttributeProto::INT)->set_i(value);
  return *this;
}

ModelBuilder& ModelBuilder::attribute(const std::string& name, const std::vector<int64_t>& values) {
  auto* a = add_attribute(*model_, name, onnx::AttributeProto::INTS);
  for (auto v : values) a->add_ints(v);
  return *this;
}

ModelBuilder& ModelBuilder::attribute(const std::string& name, float value) {
  add_attribute(*model_, name, onnx::AttributeProto::FLOAT)->set_f(value);
  return *this;
}

std::string ModelBuilder::serialize() const {
  std::string bytes;
  if (!model_->SerializeToString(&bytes)) throw std::runtime_error("cannot serialize ONNX model");
  return bytes;
}

std::filesystem::path ModelBuilder::save(const std::filesystem::path& path) const {
  const std::string bytes = serialize();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
  return path;
}

std::vector<std::string> model_node_ops(const std::filesystem::path& path) {
  const onnx::ModelProto model = load_model(path);
  std::vector<std::string> ops;
  for (const auto& n : model.graph().node()) ops.push_back(n.domain() + ":" + n.op_type());
  return ops;
}

std::vector<std::string> model_string_attributes(const std::filesystem::path& path, const std::string& op_type,
                                                 const std::string& attr) {
  const onnx::ModelProto model = load_model(path);
  std::vector<std::string> values;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() != op_type) continue;
    for (const auto& a : n.attribute())
      if (a.name() == attr) values.push_back(a.s());
  }
  return values;
}

std::filesystem::path write_matmul_chain_model(const std::filesystem::path& path) {
  constexpr int64_t kRows = 32, kSide = 512, kLayers = 3;
  std::vector<float> w(kSide * kSide);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 400.0f;
  ModelBuilder b;
  b.input("x", {kRows, kSide});
  std::string in = "x";
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string weight = "w" + std::to_string(l), out = l + 1 == kLayers ? "y" : "h" + std::to_string(l);
    b.initializer(weight, {kSide, kSide}, w).node("MatMul", {in, weight}, {out});
    in = out;
  }
  b.output("y", {kRows, kSide});
  return b.save(path);
}

std::filesystem::path write_elementwise_model(const std::filesystem::path& path, const std::vector<int64_t>& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  ModelBuilder b;
  b.input("x", shape)
      .initializer("w", shape, std::vector<float>(n, 0.75f))
      .initializer("b", {1}, {0.25f})
      .node("Mul", {"x", "w"}, {"m"})
      .node("Add", {"m", "b"}, {"a"})
      .node("Sub", {"a", "x"}, {"s"})
      .node("Relu", {"s"}, {"y"})
      .output("y", shape);
  return b.save(path);
}

}  // namespace rung::test
