#include "quantise/opset_upgrade.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <map>

namespace rung {
namespace {

bool has_shape(const onnx::ValueInfoProto& v) { return v.type().tensor_type().has_shape(); }

// One pass: a Reshape whose output rank is unknown while its target shape is a
// 1-D tensor of known length gets that rank (dimensions left unknown).
int complete_reshape_ranks(onnx::GraphProto& g) {
  std::map<std::string, onnx::ValueInfoProto*> info;
  for (auto& v : *g.mutable_value_info()) info[v.name()] = &v;
  for (auto& v : *g.mutable_input()) info[v.name()] = &v;
  int added = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Reshape" || n.input_size() < 2 || n.output_size() < 1) continue;
    auto target = info.find(n.input(1));
    if (target == info.end() || !has_shape(*target->second)) continue;
    const auto& ts = target->second->type().tensor_type().shape();
    if (ts.dim_size() != 1 || !ts.dim(0).has_dim_value()) continue;
    auto out = info.find(n.output(0));
    if (out != info.end() && has_shape(*out->second)) continue;
    onnx::ValueInfoProto* v = out != info.end() ? out->second : g.add_value_info();
    v->set_name(n.output(0));
    auto* tt = v->mutable_type()->mutable_tensor_type();
    if (auto data = info.find(n.input(0)); data != info.end() && data->second->type().tensor_type().elem_type() != 0) {
      tt->set_elem_type(data->second->type().tensor_type().elem_type());
    }
    auto* shape = tt->mutable_shape();
    for (std::int64_t i = 0; i < ts.dim(0).dim_value(); ++i) shape->add_dim();
    info[n.output(0)] = v;
    ++added;
  }
  return added;
}

}  // namespace

std::int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

int lift_constants(onnx::GraphProto& g) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  int lifted = 0;
  for (auto& n : *g.mutable_node()) {
    const bool tensor_constant = n.op_type() == "Constant" && n.domain().empty() && n.output_size() == 1 && n.attribute_size() == 1 &&
                                 n.attribute(0).name() == "value" && n.attribute(0).has_t();
    if (!tensor_constant) {
      *kept.Add() = std::move(n);
      continue;
    }
    onnx::TensorProto* t = g.add_initializer();
    *t = std::move(*n.mutable_attribute(0)->mutable_t());
    t->set_name(n.output(0));
    ++lifted;
  }
  g.mutable_node()->Swap(&kept);
  return lifted;
}

Status infer_shapes(onnx::ModelProto& model) {
  try {
    for (int round = 0; round < 64; ++round) {
      onnx::shape_inference::InferShapes(model);
      if (complete_reshape_ranks(*model.mutable_graph()) == 0) break;
    }
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("shape inference failed: {}", e.what())};
  }
  return {};
}

std::int64_t highest_convertible_opset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
}

Result<OpsetUpgrade> upgrade_opset(onnx::ModelProto& model, std::int64_t target) {
  OpsetUpgrade u;
  u.from = default_opset(model);
  u.to = target;
  if (u.from == 0) return Error{ErrorCode::kInvalidArgument, "the model imports no default-domain opset"};
  if (target < u.from) return Error{ErrorCode::kInvalidArgument, fmt::format("the model is at opset {}, above {}: rung only upgrades", u.from, target)};
  if (target > highest_convertible_opset()) {
    return Error{ErrorCode::kUnsupported, fmt::format("opset {}: this libonnx converts up to opset {}", target, highest_convertible_opset())};
  }
  u.constants_lifted = lift_constants(*model.mutable_graph());
  RUNG_RETURN_IF_ERROR(infer_shapes(model));
  if (target == u.from) return u;
  try {
    onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(model, static_cast<int>(target));
    // The converter writes new attributes-turned-inputs (axes, ...) as Constant nodes.
    u.constants_lifted += lift_constants(*converted.mutable_graph());
    model = std::move(converted);
  } catch (const std::exception& e) {
    return Error{ErrorCode::kUnsupported, fmt::format("ONNX's version converter cannot take this graph from opset {} to {}: {}", u.from, target, e.what())};
  }
  RUNG_RETURN_IF_ERROR(infer_shapes(model));
  return u;
}

}  // namespace rung
