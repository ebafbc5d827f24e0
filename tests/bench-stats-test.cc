// The arithmetic behind bench's figures, and what it reads from a model file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "core/sample_stats.h"
#include "graph/model_file.h"
#include "model_builder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(SampleStats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({5}), 5);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(SampleStats, PercentilesInterpolateBetweenRanks) {
  std::vector<double> s;
  for (int i = 1; i <= 101; ++i) s.push_back(i);  // 1..101: rank k is k+1
  EXPECT_DOUBLE_EQ(percentile(s, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(s, 50), 51);
  EXPECT_DOUBLE_EQ(percentile(s, 90), 91);
  EXPECT_DOUBLE_EQ(percentile(s, 99), 100);
  EXPECT_DOUBLE_EQ(percentile(s, 100), 101);
  EXPECT_DOUBLE_EQ(percentile({10, 20}, 50), 15);
  EXPECT_DOUBLE_EQ(percentile({10, 20}, 90), 19);
}

TEST(SampleStats, SummaryHasTheSpread) {
  auto s = summarize({10, 10, 10, 10});
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.cv, 0);
  s = summarize({8, 12, 8, 12});
  EXPECT_DOUBLE_EQ(s.mean, 10);
  EXPECT_DOUBLE_EQ(s.min, 8);
  EXPECT_DOUBLE_EQ(s.max, 12);
  EXPECT_NEAR(s.stddev, 2.3094, 1e-4);  // sample standard deviation
  EXPECT_NEAR(s.cv, 0.23094, 1e-5);
  EXPECT_GT(s.cv, 0.10);               // bench warns about this
  EXPECT_EQ(summarize({}).count, 0);
}

TEST(SampleStats, TheTailPercentilesOfASkewedSampleAreNotItsMiddle) {
  // Nine fast runs and one slow one: the median stays with the fast runs, p90 and p99 reach into the slow one.
  const auto s = summarize({1, 1, 1, 1, 11, 1, 1, 1, 1, 1});
  EXPECT_DOUBLE_EQ(s.p50, 1);
  EXPECT_NEAR(s.p90, 2, 1e-9);     // rank 8.1: 1 + 0.1 x (11 - 1)
  EXPECT_NEAR(s.p99, 10.1, 1e-9);  // rank 8.91
  EXPECT_DOUBLE_EQ(s.max, 11);
}

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-bench-model"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ModelFileTest, F32GraphIsF32WithItsHashAndOpset) {
  test::ModelBuilder b(17);
  b.input("x", {4}).initializer("w", {4}, {1, 2, 3, 4}).node("Add", {"x", "w"}, {"y"}).output("y", {4});
  auto f = inspect_model_file(b.save(dir_ / "m.onnx"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->form, NumericForm::kF32);
  EXPECT_EQ(f->opset, 17);
  EXPECT_EQ(f->nodes, 1);
  EXPECT_EQ(f->sha256.size(), 64u);
  EXPECT_GT(f->size_bytes, 0u);
}

TEST_F(ModelFileTest, QdqGraphsAreNamedByTheirZeroPointWidths) {
  auto qdq = [&](int act_type, int weight_type, const std::string& name) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("qdq");
    auto add_init = [&](const std::string& n, int type) {
      auto* t = g->add_initializer();
      t->set_name(n);
      t->set_data_type(type);
      t->add_dims(1);
      t->set_raw_data(std::string(type == onnx::TensorProto::FLOAT ? 4 : (type == onnx::TensorProto::UINT16 ? 2 : 1), '\0'));
    };
    add_init("scale", onnx::TensorProto::FLOAT);
    add_init("act_zp", act_type);
    add_init("w", weight_type);
    add_init("w_zp", weight_type);
    auto* q = g->add_node();
    q->set_op_type("QuantizeLinear");
    for (const char* i : {"x", "scale", "act_zp"}) q->add_input(i);
    q->add_output("xq");
    auto* dq = g->add_node();
    dq->set_op_type("DequantizeLinear");
    for (const char* i : {"w", "scale", "w_zp"}) dq->add_input(i);
    dq->add_output("wf");
    std::ofstream out(dir_ / name, std::ios::binary);
    m.SerializeToOstream(&out);
    out.close();
    return dir_ / name;
  };
  auto i8 = inspect_model_file(qdq(onnx::TensorProto::UINT8, onnx::TensorProto::INT8, "i8.onnx"));
  ASSERT_TRUE(i8) << i8.error().message;
  EXPECT_EQ(i8->form, NumericForm::kInt8);
  auto a16w8 = inspect_model_file(qdq(onnx::TensorProto::UINT16, onnx::TensorProto::INT8, "a16w8.onnx"));
  ASSERT_TRUE(a16w8);
  EXPECT_EQ(a16w8->form, NumericForm::kA16W8);
  EXPECT_THAT(a16w8->form_evidence, HasSubstr("16-bit activations, 8-bit weights"));
  auto a16w16 = inspect_model_file(qdq(onnx::TensorProto::UINT16, onnx::TensorProto::UINT16, "a16w16.onnx"));
  ASSERT_TRUE(a16w16);
  EXPECT_EQ(a16w16->form, NumericForm::kA16W16);
}

// The form is read from the graph, not the file name: the sample "silero_vad_half"
// holds no float16 tensor at all (its weights sit in If-branch subgraphs, all f32).
TEST_F(ModelFileTest, FormComesFromTheGraphIncludingSubgraphsNotTheName) {
  auto half = inspect_model_file(test::model_path("silero-vad/silero_vad_half.onnx"));
  ASSERT_TRUE(half) << half.error().message;
  EXPECT_EQ(half->form, NumericForm::kF32) << half->form_evidence;
  EXPECT_THAT(half->form_evidence, HasSubstr(" 0 float16"));
  // A graph whose weights are float16 initializers is f16.
  test::ModelBuilder b(17);
  b.input("x", {4}).node("Relu", {"x"}, {"y"}).output("y", {4});
  fs::path file = b.save(dir_ / "f16.onnx");
  onnx::ModelProto m;
  {
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
  }
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w16");
  w->set_data_type(onnx::TensorProto::FLOAT16);
  w->add_dims(64);
  w->set_raw_data(std::string(128, '\0'));
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(m.SerializeToOstream(&out));
  }
  auto f16 = inspect_model_file(file);
  ASSERT_TRUE(f16) << f16.error().message;
  EXPECT_EQ(f16->form, NumericForm::kF16) << f16->form_evidence;
  EXPECT_EQ(model_id("tiny", f16->form), "tiny_f16");
}

TEST_F(ModelFileTest, MissingAndGarbageFilesAreSaidSo) {
  auto missing = inspect_model_file(dir_ / "none.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  std::ofstream(dir_ / "text.onnx") << "hello, I am not a model";
  auto text = inspect_model_file(dir_ / "text.onnx");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(text.error().message, HasSubstr(": not an ONNX model: "));
  auto dir = inspect_model_file(dir_);
  ASSERT_FALSE(dir);
  EXPECT_THAT(dir.error().message, HasSubstr(": is a directory, not a file"));
}

}  // namespace
}  // namespace rung
