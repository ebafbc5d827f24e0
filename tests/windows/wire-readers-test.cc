// What the Windows build reads without the ONNX protobuf library
// (graph/protobuf_wire.h): tensor files, as the probe's workers hand their
// outputs over, and a model's control flow, which no engine is compiled for there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "graph/compile_ready.h"
#include "session/tensor_file.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WireReadersTest : public test::TempDirTest {
 protected:
  WireReadersTest() : TempDirTest("rung-wire") {}
  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
};

Tensor floats(std::string name, std::vector<std::int64_t> shape, std::vector<float> values) {
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

TEST_F(WireReadersTest, ATensorWrittenIsReadBackWhole) {
  const Tensor t = floats("logits", {2, 3}, {1.5f, -2.0f, 0.0f, 3.25f, 1e-7f, -0.0f});
  ASSERT_TRUE(write_output_directory(std::vector<Tensor>{t, floats("", {0}, {})}, dir_ / "out"));
  auto back = read_tensor_directory(dir_ / "out");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].name, "logits");
  EXPECT_EQ((*back)[0].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ((*back)[0].bytes, t.bytes);
  EXPECT_EQ((*back)[1].name, "output_1");  // no name written: the file's stem
  EXPECT_TRUE((*back)[1].bytes.empty());
  Tensor words;
  words.name = "labels";
  words.type = ElementType::kString;
  words.shape = {2};
  words.strings = {"cat", std::string("a\0b", 3)};
  ASSERT_TRUE(write_tensor_file(words, dir_ / "words.pb"));
  auto w = read_tensor_file(dir_ / "words.pb");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->strings, words.strings);
}

TEST_F(WireReadersTest, WhatOnlyTheLibraryReadsIsRefusedWithTheReason) {
  // dims [2] packed, data_type FLOAT, float_data [1, 2] packed: values in a typed field.
  const std::string typed("\x0a\x01\x02\x10\x01\x22\x08\x00\x00\x80\x3f\x00\x00\x00\x40", 15);
  auto t = parse_tensor_proto(typed, "typed.pb", "x");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, ErrorCode::kUnsupported);
  EXPECT_THAT(t.error().message, HasSubstr("typed.pb: tensor 'x' holds its values in a typed field"));
  EXPECT_FALSE(read_value_file(write("seq.pb", ""), Value::Kind::kSequence));
}

TEST_F(WireReadersTest, DamagedOrOversizedTensorsAreRefused) {
  EXPECT_THAT(parse_tensor_proto(std::string("\x0a\x05\x01", 3), "cut.pb", "x").error().message, HasSubstr("cut.pb: not an ONNX TensorProto"));
  // dims [1000000000], float, no data: a billion floats is past the limit before any is read.
  const std::string huge("\x08\x80\x94\xeb\xdc\x03\x10\x01", 8);
  auto big = parse_tensor_proto(huge, "big.pb", "x", 1 << 20);
  ASSERT_FALSE(big);
  // dims [3], float, raw_data of 8 bytes: not as many elements as its shape.
  const std::string short_raw("\x08\x03\x10\x01\x4a\x08\x00\x00\x00\x00\x00\x00\x00\x00", 14);
  EXPECT_THAT(parse_tensor_proto(short_raw, "short.pb", "x").error().message, HasSubstr("does not hold as many elements"));
}

std::string varint(std::uint64_t n) {
  std::string out;
  while (n >= 0x80) {
    out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  return out + static_cast<char>(n);
}
std::string field(int number, const std::string& bytes) { return varint(static_cast<std::uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes; }
std::string node(const std::string& op, const std::string& domain = "") { return field(4, op) + (domain.empty() ? "" : field(7, domain)); }

TEST_F(WireReadersTest, AModelWithControlFlowIsRefusedAnEngineNamingTheOp) {
  EXPECT_FALSE(compile_ready_rewrite_built());  // so the compile job refuses, rather than compiling it unready
  const fs::path plain = write("plain.onnx", field(7, field(1, node("Relu")) + field(1, node("Add"))));
  auto ok = write_compile_ready(plain, dir_ / "ready.onnx");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_FALSE(ok->changed());
  EXPECT_FALSE(fs::exists(dir_ / "ready.onnx"));

  for (const std::string op : {"If", "Loop", "Scan"}) {
    const fs::path model = write(op + ".onnx", field(7, field(1, node("Relu")) + field(1, node(op))));
    auto refused = write_compile_ready(model, dir_ / "ready.onnx");
    ASSERT_FALSE(refused) << op;
    EXPECT_EQ(refused.error().code, ErrorCode::kUnsupported);
    EXPECT_THAT(refused.error().message, HasSubstr("has control flow (" + op + ")"));
  }
  // In a model-local function (ModelProto.functions, FunctionProto.node 7) it counts too.
  EXPECT_FALSE(write_compile_ready(write("fn.onnx", field(25, field(1, "f") + field(7, node("Loop")))), dir_ / "r.onnx"));
  // An op of that name in another domain is not ONNX's control flow.
  EXPECT_TRUE(write_compile_ready(write("custom.onnx", field(7, field(1, node("If", "com.example")))), dir_ / "r.onnx"));
  EXPECT_THAT(write_compile_ready(write("cut.onnx", field(7, field(1, node("Relu"))).substr(0, 5)), dir_ / "r.onnx").error().message,
              HasSubstr("not an ONNX model"));
}

TEST_F(WireReadersTest, TheSampleModelsAreToldApart) {
  const fs::path models = RUNG_TEST_MODELS;
  auto cls = write_compile_ready(models / "ppocr" / "ch_ppocr_mobile_v2.0_cls_infer.onnx", dir_ / "r.onnx");
  ASSERT_TRUE(cls) << cls.error().message;
  auto vad = write_compile_ready(models / "silero-vad" / "silero_vad.onnx", dir_ / "r.onnx");
  ASSERT_FALSE(vad);
  EXPECT_THAT(vad.error().message, HasSubstr("has control flow (If)"));
}

}  // namespace
}  // namespace rung
