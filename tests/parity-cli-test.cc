// `rung parity` given bad input: each problem is named (the file, the input or
// output, the reason) and ends with exit 2 (usage or input), 3 (no such
// runtime build) or 1 (a side that could not run). And the input forms it
// takes: ONNX test-suite directories, .npy files, images.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/image.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

class ParityCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-parity-cli");
    fs::create_directories(dir_ / "in");
    model_ = relu_model("relu", {1, 4}, "y");
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {-1, 0.5f, 2, -3}), dir_ / "in" / "a.pb").ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path relu_model(const std::string& name, const std::vector<int64_t>& shape, const std::string& output,
                      test::ElemType type = test::ElemType::Float) {
    test::ModelBuilder b;
    b.input("x", shape, type).node(type == test::ElemType::Float ? "Relu" : "Neg", {"x"}, {output}).output(output, shape, type);
    return b.save(dir_ / (name + ".onnx"));
  }
  fs::path write_gate(const std::string& json) {
    test::write_text(dir_ / "gate.json", json);
    return dir_ / "gate.json";
  }
  test::CommandResult run(const std::string& ref, const std::string& cand, const std::string& rest) {
    return test::parity("--ref " + ref + " --cand " + cand + " " + rest);
  }
  std::string inputs() const { return "--inputs '" + (dir_ / "in").string() + "'"; }

  fs::path dir_, model_;
};

TEST_F(ParityCliTest, SameModelOnTwoBuildsPasses) {
  // Builds named by version, found under --ort-dir.
  auto r = run("'" + model_.string() + ",ort=1.30.0'", "'" + model_.string() + ",ort=1.28.2'",
               inputs() + " --ort-dir '" + (test::deps_dir() / "runtimes").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ONNX Runtime 1.28.2"));
  EXPECT_THAT(r.out, HasSubstr("PASS  tensor · y: 1 of 1 inputs within atol 1.00e-05 AND rtol 1.00e-05"));
}

TEST_F(ParityCliTest, OutputsThatDoNotLineUp) {
  const auto other = relu_model("other", {1, 4}, "z");
  auto r = run(test::side(model_), test::side(other), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("the ref model has output 'y', the cand model does not (its outputs: 'z')"));
}

TEST_F(ParityCliTest, InputShapesThatDoNotLineUp) {
  const auto wider = relu_model("wider", {1, 6}, "y");
  auto r = run(test::side(model_), test::side(wider), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("ref and cand disagree on input 'x': float32 [1, 4] vs float32 [1, 6]"));
}

TEST_F(ParityCliTest, InputTypesThatDoNotLineUp) {
  const auto ints = relu_model("ints", {1, 4}, "y", test::ElemType::Int64);
  auto r = run(test::side(model_), test::side(ints), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("ref and cand disagree on input 'x': float32 [1, 4] vs int64 [1, 4]"));
}

TEST_F(ParityCliTest, EmptyInputDirectory) {
  fs::create_directories(dir_ / "empty");
  auto r = run(test::side(model_), test::side(model_), "--inputs '" + (dir_ / "empty").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr((dir_ / "empty").string() + ": the input directory is empty"));
}

TEST_F(ParityCliTest, AnImageThatDoesNotDecode) {
  test::ModelBuilder b;
  b.input("img", {1, 3, 8, 8}).node("Relu", {"img"}, {"y"}).output("y", {1, 3, 8, 8});
  const auto m = b.save(dir_ / "img.onnx");
  fs::create_directories(dir_ / "images");
  test::write_text(dir_ / "images" / "broken.png", "this is not a PNG");
  test::write_text(dir_ / "pre.json", R"({"fit": "resize", "width": 8, "height": 8})");
  auto r = run(test::side(m), test::side(m), "--inputs '" + (dir_ / "images").string() + "' --preprocess '" + (dir_ / "pre.json").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("broken.png: not a PNG, JPEG or BMP image (rung decodes only these)"));
  // A PNG's signature with nothing of a PNG behind it reaches stb_image, which says why.
  test::write_text(dir_ / "images" / "broken.png", std::string("\x89PNG\r\n\x1a\n", 8) + "then nothing of a PNG");
  r = run(test::side(m), test::side(m), "--inputs '" + (dir_ / "images").string() + "' --preprocess '" + (dir_ / "pre.json").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, ContainsRegex("broken.png: the image does not decode \\(.+\\)"));
}

TEST_F(ParityCliTest, ImagesWithoutADeclaredPreprocessing) {
  Image img{4, 4, 3, std::vector<std::uint8_t>(48, 200)};
  ASSERT_TRUE(write_png(img, dir_ / "in" / "photo.png").ok());
  auto r = run(test::side(model_), test::side(model_), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("holds images (photo.png among them) but no preprocessing is declared"));
}

TEST_F(ParityCliTest, ImagesLetterboxedIntoTheModelInput) {
  test::ModelBuilder b;
  b.input("img", {1, 3, 16, 16}).initializer("k", {}, {2.0f}).node("Mul", {"img", "k"}, {"y"}).output("y", {1, 3, 16, 16});
  const auto m = b.save(dir_ / "img.onnx");
  fs::create_directories(dir_ / "images");
  for (int n = 0; n < 2; ++n) {
    Image img{20 + 10 * n, 10, 3, {}};
    for (int i = 0; i < img.width * img.height * 3; ++i) img.pixels.push_back(static_cast<std::uint8_t>(i * 7 + n));
    ASSERT_TRUE(write_png(img, dir_ / "images" / ("photo" + std::to_string(n) + ".png")).ok());
  }
  test::write_text(dir_ / "gate.json", R"({"preprocess": {"fit": "letterbox", "width": 16, "height": 16, "pad": 114,
      "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}, "gates": [{"decoder": "tensor"}]})");
  auto r = run(test::side(m), test::side(m, "1.28.2"), "--inputs '" + (dir_ / "images").string() + "' --gate '" + (dir_ / "gate.json").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 inputs"));
}

TEST_F(ParityCliTest, ATensorThatDoesNotFitTheModel) {
  ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 5}, {1, 2, 3, 4, 5}), dir_ / "in" / "b.pb").ok());
  auto r = run(test::side(model_), test::side(model_), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("b.pb: the tensor for input 'x' is float32 [1, 5]; the model wants float32 [1, 4]"));
}

TEST_F(ParityCliTest, AGateNamingAnOutputThatIsNotThere) {
  auto r = run(test::side(model_), test::side(model_),
               inputs() + " --gate '" + write_gate(R"({"gates": [{"decoder": "embedding", "output": "nope"}]})").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("gate.json: embedding gate: names output 'nope', which the model does not have (its outputs: 'y')"));
}

TEST_F(ParityCliTest, AGateWithAnUnknownDecoderOrAMisspeltBound) {
  auto r = run(test::side(model_), test::side(model_), inputs() + " --gate '" + write_gate(R"({"gates": [{"decoder": "ocr"}]})").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("gate 1: unknown decoder 'ocr' (known: tensor, classification, slots, boxes, embedding, text, mask)"));
  r = run(test::side(model_), test::side(model_),
          inputs() + " --gate '" + write_gate(R"({"gates": [{"decoder": "boxes", "output": "y", "min_recal": 0.9}]})").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("gate 1 (boxes): unknown key 'min_recal'"));
}

TEST_F(ParityCliTest, OnnxTestSuiteDirectoriesAndNpyFiles) {
  fs::create_directories(dir_ / "in" / "test_data_set_0");
  ASSERT_TRUE(write_tensor_file(test::float_tensor("", {1, 4}, {1, -2, 3, -4}), dir_ / "in" / "test_data_set_0" / "input_0.pb").ok());
  // A hand-written .npy (format 1.0): '<f4', C order, shape (1, 4).
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  const float values[4] = {0.25f, -0.5f, 1, 2};
  npy.append(reinterpret_cast<const char*>(values), sizeof values);
  test::write_text(dir_ / "in" / "c.npy", npy);
  auto r = run(test::side(model_), test::side(model_, "1.28.2"), inputs());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 inputs"));
}

TEST_F(ParityCliTest, ARuntimeVersionNotFound) {
  auto r = run("'" + model_.string() + ",ort=9.9'", test::side(model_), inputs());
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no ONNX Runtime 9.9 among the builds found"));
}

TEST_F(ParityCliTest, MalformedSidesAndMissingModels) {
  auto r = run("'" + model_.string() + ",colour=red'", test::side(model_), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown key 'colour' (expected rung, ort, threads, option.NAME)"));
  r = run(test::side(dir_ / "missing.onnx"), test::side(model_), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--ref: " + (dir_ / "missing.onnx").string() + ": does not exist"));
  r = run(test::side(model_), test::side(model_), "");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no inputs"));
}

// A side the CPU cannot load is an input error (2); a rung above the CPU that cannot build a
// model the CPU runs is the answer "no" (1).
TEST_F(ParityCliTest, ACandidateThatCannotBuildItsSession) {
  test::write_text(dir_ / "garbage.onnx", "not a model");
  auto r = run(test::side(model_), test::side(dir_ / "garbage.onnx"), inputs());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("cand (garbage.onnx on CPU"));
  EXPECT_THAT(r.err, HasSubstr("the session could not be built"));
  auto rung = run(test::side(model_), test::sim_ep_side(model_, ",option.fail_at=compile"), inputs());
  EXPECT_EQ(rung.exit_code, 1) << rung.out << rung.err;
  EXPECT_THAT(rung.err, HasSubstr("the session could not be built"));
}

TEST_F(ParityCliTest, ACandidateThatCrashesIsReportedNotPropagated) {
  auto r = run(test::side(model_), test::sim_ep_side(model_, ",option.abort_at=compute"), inputs());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("cand ("));
  EXPECT_THAT(r.err, HasSubstr("on input a.pb: the worker was killed by SIGABRT"));
}

}  // namespace
}  // namespace rung

namespace rung {
namespace {

// An ONNX test folder: model.onnx beside test_data_set_N/ with inputs and expected outputs.
class ParityTestFolderTest : public ParityCliTest {
 protected:
  fs::path test_folder(const std::vector<float>& expected) {
    const fs::path t = dir_ / "node" / "test_relu";
    fs::create_directories(t / "test_data_set_0");
    fs::create_directories(t / "test_data_set_1");
    fs::copy_file(model_, t / "model.onnx");
    EXPECT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {-1, 0.5f, 2, -3}), t / "test_data_set_0" / "input_0.pb"));
    EXPECT_TRUE(write_tensor_file(test::float_tensor("y", {1, 4}, expected), t / "test_data_set_0" / "output_0.pb"));
    EXPECT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {1, 1, 1, 1}), t / "test_data_set_1" / "input_0.pb"));
    EXPECT_TRUE(write_tensor_file(test::float_tensor("y", {1, 4}, {1, 1, 1, 1}), t / "test_data_set_1" / "output_0.pb"));
    return t;
  }
};

TEST_F(ParityTestFolderTest, ASideHeldToTheTestsStoredOutputs) {
  const fs::path t = test_folder({0, 0.5f, 2, 0});
  auto r = run("'expected:" + t.string() + "'", test::side(t / "model.onnx"), "--inputs '" + t.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ref   the outputs stored in " + t.string()));
  EXPECT_THAT(r.out, HasSubstr("PASS  tensor · y: 2 of 2 inputs within"));
}

TEST_F(ParityTestFolderTest, StoredOutputsThatDifferFailTheGate) {
  const fs::path t = test_folder({0, 0.5f, 2.5f, 0});
  auto r = run("'expected:" + t.string() + "'", test::side(t / "model.onnx"), "--inputs '" + t.string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  tensor · y: 1 of 2 inputs within"));
  EXPECT_THAT(r.out, HasSubstr("failing inputs: test_data_set_0"));
}

TEST_F(ParityTestFolderTest, StoredOutputsMustBeThereAndOneSideMustRun) {
  const fs::path t = test_folder({0, 0.5f, 2, 0});
  auto missing = run("'expected:" + (dir_ / "elsewhere").string() + "'", test::side(t / "model.onnx"), "--inputs '" + t.string() + "'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("elsewhere: does not exist"));
  auto wrong = run("'expected:" + (dir_ / "in").string() + "'", test::side(t / "model.onnx"), "--inputs '" + t.string() + "'");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("holds no test_data_set_0/ with the outputs of input test_data_set_0"));
  auto both = run("'expected:" + t.string() + "'", "'expected:" + t.string() + "'", "--inputs '" + t.string() + "'");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("both sides are stored outputs"));
}

TEST_F(ParityTestFolderTest, SequencesAndOptionalValuesGoToTheValueGate) {
  test::ModelBuilder b(18);
  b.input("x", {2}).node("SequenceConstruct", {"x", "x"}, {"seq"}).sequence_output("seq", test::ElemType::Float);
  b.node("Optional", {"x"}, {"opt"}).optional_output("opt", test::ElemType::Float);
  b.node("Relu", {"x"}, {"y"}).output("y", {2});
  const fs::path m = b.save(dir_ / "values.onnx");
  fs::create_directories(dir_ / "vin");
  ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {2}, {-1, 2}), dir_ / "vin" / "a.pb"));
  auto same = run(test::side(m), test::side(m, "1.28.2"), "--inputs '" + (dir_ / "vin").string() + "'");
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_THAT(same.out, HasSubstr("PASS  tensor · y"));
  EXPECT_THAT(same.out, HasSubstr("PASS  value · 2 outputs: 1 of 1 inputs give the same sequences and optional values"));
}

}  // namespace
}  // namespace rung
