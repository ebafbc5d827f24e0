// The stable model hash on the bundled models: doc strings full of absolute
// source paths (what an exporter writes, and what moving its directory
// changes) leave it alone, while the file's own hash moves; one changed node
// (a Cast) moves it.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <functional>

#include "graph/model_file.h"
#include "graph/onnx_file.h"
#include "graph/stable_hash.h"
#include "os/file_hash.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

onnx::ModelProto load(const fs::path& file) {
  auto m = read_onnx_model(file);
  EXPECT_TRUE(m) << file;
  return m ? *m : onnx::ModelProto{};
}

void save(const onnx::ModelProto& m, const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

// Every graph of a model, subgraphs of If, Loop and Scan included.
void for_each_graph(onnx::GraphProto& g, const std::function<void(onnx::GraphProto&, int depth)>& f, int depth = 0) {
  f(g, depth);
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) for_each_graph(*a.mutable_g(), f, depth + 1);
      for (auto& sub : *a.mutable_graphs()) for_each_graph(sub, f, depth + 1);
    }
  }
}

struct Injected {
  int nodes = 0, subgraph_nodes = 0, value_infos = 0;
};

// What a tracing exporter leaves: absolute paths of the checkout it ran in, everywhere a doc string goes.
Injected inject_doc_strings(onnx::ModelProto& m, const std::string& root) {
  Injected n;
  m.set_doc_string("exported from " + root + "/export.py");
  for_each_graph(*m.mutable_graph(), [&](onnx::GraphProto& g, int depth) {
    g.set_doc_string("graph traced in " + root);
    for (auto& node : *g.mutable_node()) {
      node.set_doc_string(root + "/model/layers.py(" + std::to_string(n.nodes) + "): forward\n" + root + "/venv/lib/torch/nn/module.py(1501)");
      for (auto& a : *node.mutable_attribute()) a.set_doc_string(root + "/attr");
      n.nodes++;
      if (depth > 0) n.subgraph_nodes++;
    }
    for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()}) {
      for (auto& v : *list) {
        v.set_doc_string(root + "/shapes.py");
        n.value_infos++;
      }
    }
    for (auto& t : *g.mutable_initializer()) t.set_doc_string(root + "/weights.py");
  });
  for (auto& f : *m.mutable_functions()) {
    f.set_doc_string(root + "/functions.py");
    for (auto& node : *f.mutable_node()) node.set_doc_string(root + "/functions.py(7)");
  }
  return n;
}

struct Bundled {
  const char* file;
  bool has_subgraphs;
};
void PrintTo(const Bundled& b, std::ostream* os) { *os << b.file; }

class StableHashOnBundledModels : public ::testing::TestWithParam<Bundled> {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-stable-hash"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(StableHashOnBundledModels, MovingTheExportDirectoryChangesTheBytesButNotTheStableHash) {
  const fs::path original = test::model_path(GetParam().file);
  auto original_stable = stable_model_hash_of_file(original);
  ASSERT_TRUE(original_stable) << original_stable.error().message;
  auto m = load(original);
  // The bundled file may carry its own doc strings: the stable hash of the file equals that of its cleared copy.
  onnx::ModelProto copy = m;
  clear_doc_strings(copy);
  save(copy, dir_ / "cleared.onnx");
  EXPECT_EQ(*stable_model_hash_of_file(dir_ / "cleared.onnx"), *original_stable);

  // The same export from two checkouts: /home/ana/src/detector and /tmp/ci/build-4711/detector.
  auto first = m, second = m;
  const Injected n = inject_doc_strings(first, "/home/ana/src/detector");
  inject_doc_strings(second, "/tmp/ci/build-4711/detector");
  ASSERT_GT(n.nodes, 0);
  if (GetParam().has_subgraphs) {
    ASSERT_GT(n.subgraph_nodes, 0) << "the injection must reach the If branches";
  }
  save(first, dir_ / "a" / "model.onnx");
  save(second, dir_ / "b" / "model.onnx");

  const auto raw_original = *sha256_of_file(original), raw_a = *sha256_of_file(dir_ / "a" / "model.onnx"),
             raw_b = *sha256_of_file(dir_ / "b" / "model.onnx");
  EXPECT_NE(raw_a, raw_original);
  EXPECT_NE(raw_a, raw_b);
  EXPECT_EQ(*stable_model_hash_of_file(dir_ / "a" / "model.onnx"), *original_stable);
  EXPECT_EQ(*stable_model_hash_of_file(dir_ / "b" / "model.onnx"), *original_stable);
}

INSTANTIATE_TEST_SUITE_P(Models, StableHashOnBundledModels,
                         ::testing::Values(Bundled{"ppocr/ch_PP-OCRv4_det_infer.onnx", false}, Bundled{"ppocr/ch_PP-OCRv4_rec_infer.onnx", false},
                                           Bundled{"ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx", false},
                                           Bundled{"silero-vad/silero_vad.onnx", true}, Bundled{"silero-vad/silero_vad_op18_ifless.onnx", false}),
                         [](const auto& param_info) {
                           std::string n = fs::path(param_info.param.file).stem().string();
                           for (auto& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

class StableHashTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-stable-hash"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// The first Cast node of any graph of the model (If branches included).
onnx::NodeProto* first_cast(onnx::ModelProto& m) {
  onnx::NodeProto* found = nullptr;
  for_each_graph(*m.mutable_graph(), [&](onnx::GraphProto& g, int) {
    for (auto& n : *g.mutable_node()) {
      if (!found && n.op_type() == "Cast") found = &n;
    }
  });
  return found;
}

TEST_F(StableHashTest, OneChangedCastChangesTheStableHash) {
  const fs::path original = test::model_path("silero-vad/silero_vad.onnx");
  auto m = load(original);
  onnx::NodeProto* cast = first_cast(m);
  ASSERT_NE(cast, nullptr) << "Silero VAD has Cast nodes";
  onnx::AttributeProto* to = nullptr;
  for (auto& a : *cast->mutable_attribute()) {
    if (a.name() == "to") to = &a;
  }
  ASSERT_NE(to, nullptr);
  to->set_i(to->i() == onnx::TensorProto::FLOAT ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT);
  save(m, dir_ / "cast.onnx");
  EXPECT_NE(*stable_model_hash_of_file(dir_ / "cast.onnx"), *stable_model_hash_of_file(original));

  // Removing it (the 36-Cast export against the 39-Cast one) changes it too, doc strings or not.
  auto without = load(original);
  inject_doc_strings(without, "/elsewhere");
  onnx::NodeProto* c = first_cast(without);
  c->set_op_type("Identity");
  c->clear_attribute();
  save(without, dir_ / "identity.onnx");
  EXPECT_NE(*stable_model_hash_of_file(dir_ / "identity.onnx"), *stable_model_hash_of_file(original));
}

TEST_F(StableHashTest, DocStringsInModelLocalFunctionsAreClearedToo) {
  auto with_function = [](const std::string& doc) {
    auto m = load(test::model_path("ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx"));
    onnx::FunctionProto* f = m.add_functions();
    f->set_name("Twice");
    f->set_domain("rung.test");
    f->add_input("x");
    f->add_output("y");
    auto* n = f->add_node();
    n->set_op_type("Add");
    n->add_input("x");
    n->add_input("x");
    n->add_output("y");
    f->set_doc_string(doc);
    n->set_doc_string(doc);
    return m;
  };
  save(with_function(""), dir_ / "plain.onnx");
  save(with_function("/home/ana/src/functions.py(12)"), dir_ / "documented.onnx");
  EXPECT_NE(*sha256_of_file(dir_ / "plain.onnx"), *sha256_of_file(dir_ / "documented.onnx"));
  EXPECT_EQ(*stable_model_hash_of_file(dir_ / "plain.onnx"), *stable_model_hash_of_file(dir_ / "documented.onnx"));
}

TEST_F(StableHashTest, AWeightChangedByOneBitChangesIt) {
  const fs::path original = test::model_path("ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx");
  auto m = load(original);
  // Its weights are initializers or, in some exports, Constant nodes' tensors.
  onnx::TensorProto* t = nullptr;
  if (m.graph().initializer_size() > 0) t = m.mutable_graph()->mutable_initializer(0);
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (t == nullptr && a.has_t()) t = a.mutable_t();
    }
  }
  ASSERT_NE(t, nullptr);
  if (!t->raw_data().empty()) {
    std::string raw = t->raw_data();
    raw[0] = static_cast<char>(raw[0] ^ 1);
    t->set_raw_data(raw);
  } else {
    ASSERT_GT(t->float_data_size(), 0);
    t->set_float_data(0, t->float_data(0) + 1.0f);
  }
  save(m, dir_ / "weight.onnx");
  EXPECT_NE(*stable_model_hash_of_file(dir_ / "weight.onnx"), *stable_model_hash_of_file(original));
}

TEST_F(StableHashTest, InspectingAModelReportsBothHashesAndItsWeightsByType) {
  auto f = inspect_model_file(test::model_path("silero-vad/silero_vad.onnx"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->sha256, *sha256_of_file(test::model_path("silero-vad/silero_vad.onnx")));
  EXPECT_EQ(f->stable_sha256, *stable_model_hash_of_file(test::model_path("silero-vad/silero_vad.onnx")));
  ASSERT_TRUE(f->weights_by_type.count("float32"));
  EXPECT_GT(f->weights_by_type["float32"].tensors, 0u);
  EXPECT_GT(f->weights_by_type["float32"].elements, f->weights_by_type["float32"].tensors);
  EXPECT_EQ(f->ep_context_nodes, 0);
}

TEST_F(StableHashTest, NotAModelIsAnErrorNamingTheFile) {
  std::ofstream(dir_ / "text.onnx") << "not a model";
  auto text = stable_model_hash_of_file(dir_ / "text.onnx");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(text.error().message.find("text.onnx"), std::string::npos);
  auto missing = stable_model_hash_of_file(dir_ / "none.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace rung
