#include "graph/model_file.h"

#include <fmt/format.h>

#include <map>

#include "graph/onnx_file.h"
#include "graph/stable_hash.h"
#include "os/file_hash.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

bool is_16_bit(int t) { return t == onnx::TensorProto::UINT16 || t == onnx::TensorProto::INT16; }

// "float32", "float16", "int8", "uint16", ...: ONNX's own names, lower case, floats by width.
std::string element_type_name(int t) {
  if (t == onnx::TensorProto::FLOAT) return "float32";
  if (t == onnx::TensorProto::DOUBLE) return "float64";
  if (!onnx::TensorProto_DataType_IsValid(t)) return "type " + std::to_string(t);
  std::string name = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

// Weight elements by float type, and QDQ zero-point widths, over a graph and
// its subgraphs (If/Loop bodies hold most of some models' weights) and the
// tensors of Constant nodes.
struct Census {
  std::map<std::string, int> init_type;
  std::uint64_t f32 = 0, f16 = 0, i8 = 0;
  std::map<std::string, TensorCount> by_type;
  int quantize = 0, dequantize = 0, ep_context = 0;
  int int8_casts = 0;  // int8 initializers cast to float: a w8 form's weights
  bool act16 = false, weight16 = false;

  void count_tensor(const onnx::TensorProto& t) {
    init_type[t.name()] = t.data_type();
    std::uint64_t n = 1;
    for (auto d : t.dims()) n *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
    if (t.data_type() == onnx::TensorProto::FLOAT) f32 += n;
    if (t.data_type() == onnx::TensorProto::FLOAT16) f16 += n;
    if (t.data_type() == onnx::TensorProto::INT8) i8 += n;
    TensorCount& c = by_type[element_type_name(t.data_type())];
    c.tensors++;
    c.elements += n;
  }

  void walk(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) count_tensor(t);
    for (const auto& n : g.node()) {
      if (n.op_type() == "EPContext") ep_context++;
      for (const auto& a : n.attribute()) {
        if (a.has_t()) count_tensor(a.t());
        if (a.has_g()) walk(a.g());
        for (const auto& sub : a.graphs()) walk(sub);
      }
    }
    for (const auto& n : g.node()) {
      if (n.op_type() == "Cast" && n.input_size() == 1 && init_type.count(n.input(0)) && init_type[n.input(0)] == onnx::TensorProto::INT8) {
        for (const auto& a : n.attribute()) {
          if (a.name() == "to" && a.i() == onnx::TensorProto::FLOAT) int8_casts++;
        }
      }
      const bool q = n.op_type() == "QuantizeLinear", dq = n.op_type() == "DequantizeLinear";
      if (!q && !dq) continue;
      (q ? quantize : dequantize)++;
      int zp_type = 0;
      if (n.input_size() >= 3) {
        if (auto it = init_type.find(n.input(2)); it != init_type.end()) zp_type = it->second;
      }
      if (q && is_16_bit(zp_type)) act16 = true;
      if (dq && init_type.count(n.input(0)) && is_16_bit(init_type[n.input(0)])) weight16 = true;
    }
  }
};

// The numeric form a graph computes in: a QDQ graph by the widths of its zero
// points (activations are quantised by QuantizeLinear, weights are initializers
// fed to DequantizeLinear); a graph whose weights are mostly int8 initializers
// cast to float computes in float on int8 weights (w8); otherwise by which float
// type holds more weights.
void classify(const onnx::GraphProto& g, ModelFileFacts& f) {
  Census c;
  c.walk(g);
  f.weights_by_type = c.by_type;
  f.ep_context_nodes = c.ep_context;
  if (c.quantize > 0 || c.dequantize > 0) {
    f.form = c.act16 ? (c.weight16 ? NumericForm::kA16W16 : NumericForm::kA16W8) : NumericForm::kInt8;
    f.form_evidence = fmt::format("{} QuantizeLinear and {} DequantizeLinear nodes; {}-bit activations, {}-bit weights", c.quantize,
                                  c.dequantize, c.act16 ? 16 : 8, c.weight16 ? 16 : 8);
  } else if (c.int8_casts > 0 && c.i8 > c.f32 + c.f16) {
    f.form = NumericForm::kW8;
    f.form_evidence = fmt::format("{} int8 weight elements cast to float by {} Cast nodes, against {} float32: float arithmetic", c.i8,
                                  c.int8_casts, c.f32);
  } else if (c.f16 > c.f32) {
    f.form = NumericForm::kF16;
    f.form_evidence = fmt::format("{} float16 weight elements against {} float32", c.f16, c.f32);
  } else {
    f.form = NumericForm::kF32;
    f.form_evidence = fmt::format("{} float32 weight elements, {} float16", c.f32, c.f16);
  }
}

}  // namespace

Result<std::vector<std::string>> graph_op_types(const fs::path& file) {
  auto model = read_onnx_model(file);
  if (!model) return model.error();
  std::vector<std::string> ops;
  for (const auto& n : model->graph().node()) {
    const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
    ops.push_back(standard ? n.op_type() : n.domain() + "." + n.op_type());
  }
  return ops;
}

namespace {

// The facts of `model`, read from `file`; its doc strings are cleared for the stable hash.
Result<ModelFileFacts> facts_of(onnx::ModelProto& model, const fs::path& file) {
  ModelFileFacts f;
  std::error_code ec;
  f.size_bytes = fs::file_size(file, ec);
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") f.opset = o.version();
  }
  f.nodes = model.graph().node_size();
  classify(model.graph(), f);
  f.stable_sha256 = stable_model_hash(model);
  auto hash = sha256_of_file(file);
  if (!hash) return hash.error();
  f.sha256 = *hash;
  return f;
}

}  // namespace

Result<ModelFileFacts> inspect_model_file(const fs::path& file) {
  auto model = read_onnx_model(file);
  if (!model) return model.error();
  return facts_of(*model, file);
}

Result<ModelFileFacts> inspect_model(const onnx::ModelProto& model, const fs::path& file) {
  onnx::ModelProto hashed = model;  // the caller's graph keeps its doc strings
  return facts_of(hashed, file);
}

}  // namespace rung
