#include "graph/stable_hash.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "graph/model_file.h"
#include "graph/onnx_file.h"
#include "os/file_hash.h"

namespace rung {
namespace {

void clear(onnx::GraphProto& g);

void clear(onnx::ValueInfoProto& v) { v.clear_doc_string(); }

void clear(onnx::TensorProto& t) { t.clear_doc_string(); }

void clear(onnx::AttributeProto& a) {
  a.clear_doc_string();
  if (a.has_t()) clear(*a.mutable_t());
  for (auto& t : *a.mutable_tensors()) clear(t);
  if (a.has_g()) clear(*a.mutable_g());
  for (auto& g : *a.mutable_graphs()) clear(g);
  if (a.has_sparse_tensor()) {
    clear(*a.mutable_sparse_tensor()->mutable_values());
    clear(*a.mutable_sparse_tensor()->mutable_indices());
  }
}

void clear(onnx::NodeProto& n) {
  n.clear_doc_string();
  for (auto& a : *n.mutable_attribute()) clear(a);
}

void clear(onnx::GraphProto& g) {
  g.clear_doc_string();
  for (auto& n : *g.mutable_node()) clear(n);
  for (auto& t : *g.mutable_initializer()) clear(t);
  for (auto& s : *g.mutable_sparse_initializer()) {
    clear(*s.mutable_values());
    clear(*s.mutable_indices());
  }
  for (auto& v : *g.mutable_input()) clear(v);
  for (auto& v : *g.mutable_output()) clear(v);
  for (auto& v : *g.mutable_value_info()) clear(v);
}

void clear(onnx::FunctionProto& f) {
  f.clear_doc_string();
  for (auto& n : *f.mutable_node()) clear(n);
}

}  // namespace

void clear_doc_strings(onnx::ModelProto& model) {
  model.clear_doc_string();
  if (model.has_graph()) clear(*model.mutable_graph());
  for (auto& f : *model.mutable_functions()) clear(f);
  for (auto& t : *model.mutable_training_info()) {
    clear(*t.mutable_initialization());
    clear(*t.mutable_algorithm());
  }
}

std::string stable_model_hash(onnx::ModelProto& model) {
  clear_doc_strings(model);
  // Deterministic serialisation: the same message always gives the same bytes
  // (map fields in key order), whatever order the file stored them in.
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&coded);
  }
  return sha256_hex(bytes);
}

Result<std::string> stable_model_hash_of_file(const std::filesystem::path& file) {
  auto model = read_onnx_model(file);
  if (!model) return model.error();
  return stable_model_hash(*model);
}

}  // namespace rung
