// Every tensor type ONNX Runtime computes with, through every path rung has:
// names, the narrow float conversions at their boundaries, .pb and .npy files
// both ways, generated inputs, comparison at each type's own tolerance, ONNX's
// sequence and optional values, and real sessions on ONNX Runtime 1.30.0.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "in_process_runtime.h"
#include "model_builder.h"
#include "rung/tolerance.h"
#include "session/inputs.h"
#include "session/npy_file.h"
#include "session/session.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr ElementType kAllTypes[] = {
    ElementType::kFloat,  ElementType::kFloat16, ElementType::kBFloat16, ElementType::kDouble, ElementType::kFloat8E4M3FN,
    ElementType::kFloat8E4M3FNUZ, ElementType::kFloat8E5M2, ElementType::kFloat8E5M2FNUZ, ElementType::kInt8, ElementType::kUint8,
    ElementType::kInt16, ElementType::kUint16, ElementType::kInt32, ElementType::kUint32, ElementType::kInt64, ElementType::kUint64,
    ElementType::kBool, ElementType::kString};

// A [2, 3] tensor of `type` whose bytes are 1, 2, 3, ... (strings "e0".."e5").
Tensor sample(ElementType type, const std::string& name = "t") {
  Tensor t;
  t.name = name;
  t.type = type;
  t.shape = {2, 3};
  if (type == ElementType::kString) {
    t.strings = {"e0", "e1", "", "ünï", "e4", std::string("a\0b", 3)};
    return t;
  }
  t.bytes.resize(6 * element_size(type));
  for (std::size_t i = 0; i < t.bytes.size(); ++i) t.bytes[i] = static_cast<std::byte>(i % 7 + 1);
  return t;
}

Tensor floats(ElementType type, const std::vector<double>& values) {
  Tensor t;
  t.name = "f";
  t.type = type;
  t.shape = {static_cast<std::int64_t>(values.size())};
  for (double v : values) {
    if (type == ElementType::kFloat16 || type == ElementType::kBFloat16) {
      const std::uint16_t h = type == ElementType::kFloat16 ? double_to_half(v) : double_to_bfloat16(v);
      t.bytes.push_back(static_cast<std::byte>(h & 0xff));
      t.bytes.push_back(static_cast<std::byte>(h >> 8));
    } else {
      const float f = static_cast<float>(v);
      const auto* p = reinterpret_cast<const std::byte*>(&f);
      t.bytes.insert(t.bytes.end(), p, p + 4);
    }
  }
  return t;
}

class TensorTypesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-tensor-types"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(ElementTypes, EveryTypeHasANameThatReadsBack) {
  for (auto type : kAllTypes) {
    const std::string name = element_type_name(type);
    EXPECT_THAT(name, Not(HasSubstr("unsupported")));
    EXPECT_EQ(element_type_from_name(name), type) << name;
  }
  EXPECT_EQ(element_type_from_name("complex64"), std::nullopt);
  EXPECT_EQ(element_size(ElementType::kBFloat16), 2u);
  EXPECT_EQ(element_size(ElementType::kUint64), 8u);
  EXPECT_EQ(element_size(ElementType::kFloat8E5M2), 1u);
  EXPECT_EQ(element_size(ElementType::kString), 0u);
}

TEST(NarrowFloats, HalfRoundsToNearestEvenAndSaturatesToInfinity) {
  EXPECT_EQ(double_to_half(1.0), 0x3c00);
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);            // the largest half
  EXPECT_EQ(double_to_half(65519.0), 0x7bff);            // still rounds down
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);            // rounds up past it: infinity
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -26)), 0x0000);  // a quarter of it: zero
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);      // a tie: to the even mantissa
  EXPECT_EQ(double_to_half(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);  // a tie: to the even mantissa, upwards
  EXPECT_EQ(double_to_half(-2.0), 0xc000);
  EXPECT_TRUE(std::isnan(half_to_double(double_to_half(std::nan("")))));
  EXPECT_EQ(half_to_double(0x7bff), 65504.0);
}

TEST(NarrowFloats, Bfloat16KeepsTheTopOfAFloatRoundedToEven) {
  EXPECT_EQ(double_to_bfloat16(1.0), 0x3f80);
  EXPECT_EQ(double_to_bfloat16(1.0 + std::ldexp(1.0, -8)), 0x3f80);      // a tie: stays even
  EXPECT_EQ(double_to_bfloat16(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);  // a tie: up to even
  EXPECT_EQ(double_to_bfloat16(1.0 + std::ldexp(1.0, -7)), 0x3f81);      // exactly one unit
  EXPECT_EQ(bfloat16_to_double(0x4049), 3.140625);
  EXPECT_TRUE(std::isnan(bfloat16_to_double(double_to_bfloat16(std::nan("")))));
}

TEST(NarrowFloats, Float8FormatsDecodeTheirOwnSpecialValues) {
  EXPECT_EQ(float8_to_double(ElementType::kFloat8E4M3FN, 0x7e), 448.0);  // its largest
  EXPECT_TRUE(std::isnan(float8_to_double(ElementType::kFloat8E4M3FN, 0x7f)));
  EXPECT_EQ(float8_to_double(ElementType::kFloat8E4M3FN, 0x01), std::ldexp(1.0, -9));  // its smallest subnormal
  EXPECT_EQ(float8_to_double(ElementType::kFloat8E4M3FNUZ, 0x7f), 240.0);
  EXPECT_TRUE(std::isnan(float8_to_double(ElementType::kFloat8E4M3FNUZ, 0x80)));
  EXPECT_EQ(float8_to_double(ElementType::kFloat8E5M2, 0x7b), 57344.0);
  EXPECT_EQ(float8_to_double(ElementType::kFloat8E5M2, 0x7c), INFINITY);
  EXPECT_TRUE(std::isnan(float8_to_double(ElementType::kFloat8E5M2, 0x7d)));
  EXPECT_EQ(float8_to_double(ElementType::kFloat8E5M2FNUZ, 0x7f), 57344.0);
  EXPECT_TRUE(std::isnan(float8_to_double(ElementType::kFloat8E5M2FNUZ, 0x80)));
  // Encoding: the nearest value, saturating at the largest finite one.
  EXPECT_EQ(double_to_float8(ElementType::kFloat8E4M3FN, 1.0), 0x38);
  EXPECT_EQ(double_to_float8(ElementType::kFloat8E4M3FN, 1e6), 0x7e);
  EXPECT_EQ(double_to_float8(ElementType::kFloat8E4M3FN, 1.0624), 0x38);  // 1.0625 is halfway to 1.125: below it
  EXPECT_EQ(double_to_float8(ElementType::kFloat8E4M3FN, 1.07), 0x39);
}

TEST_F(TensorTypesTest, EveryTypeRoundTripsThroughAPbFile) {
  for (auto type : kAllTypes) {
    const Tensor t = sample(type, std::string("x_") + element_type_name(type));
    const fs::path file = dir_ / (t.name + ".pb");
    ASSERT_TRUE(write_tensor_file(t, file)) << element_type_name(type);
    auto back = read_tensor_file(file);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->type, type) << element_type_name(type);
    EXPECT_EQ(back->name, t.name);
    EXPECT_EQ(back->shape, t.shape);
    EXPECT_EQ(back->bytes, t.bytes) << element_type_name(type);
    EXPECT_EQ(back->strings, t.strings);
  }
}

TEST_F(TensorTypesTest, TypedFieldsAreReadWhereOnnxKeepsEachType) {
  // Writers other than rung use the typed fields: uint16 and bfloat16 in int32_data, uint64 in uint64_data.
  auto write = [&](const char* name, auto fill) {
    onnx::TensorProto p;
    p.set_name(name);
    p.add_dims(2);
    fill(p);
    std::ofstream(dir_ / (std::string(name) + ".pb"), std::ios::binary) << p.SerializeAsString();
    return read_tensor_file(dir_ / (std::string(name) + ".pb"));
  };
  auto u16 = write("u16", [](onnx::TensorProto& p) { p.set_data_type(onnx::TensorProto::UINT16); p.add_int32_data(65535); p.add_int32_data(7); });
  ASSERT_TRUE(u16) << u16.error().message;
  EXPECT_EQ(u16->to_doubles(), (std::vector<double>{65535, 7}));
  auto u64 = write("u64", [](onnx::TensorProto& p) { p.set_data_type(onnx::TensorProto::UINT64); p.add_uint64_data(~0ull); p.add_uint64_data(3); });
  ASSERT_TRUE(u64) << u64.error().message;
  EXPECT_EQ(u64->view<std::uint64_t>()[0], ~0ull);
  auto bf = write("bf", [](onnx::TensorProto& p) { p.set_data_type(onnx::TensorProto::BFLOAT16); p.add_int32_data(0x3f80); p.add_int32_data(0xc000); });
  ASSERT_TRUE(bf) << bf.error().message;
  EXPECT_EQ(bf->to_doubles(), (std::vector<double>{1.0, -2.0}));
  auto s = write("s", [](onnx::TensorProto& p) { p.set_data_type(onnx::TensorProto::STRING); p.add_string_data("a"); p.add_string_data("bc"); });
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->strings, (std::vector<std::string>{"a", "bc"}));
  auto short_of = write("short", [](onnx::TensorProto& p) { p.set_data_type(onnx::TensorProto::STRING); p.add_string_data("a"); });
  ASSERT_FALSE(short_of);
  EXPECT_THAT(short_of.error().message, HasSubstr("holds 1 strings, shape [2] of string needs 2"));
}

TEST_F(TensorTypesTest, ATypeRungDoesNotHoldIsNamedNotNumbered) {
  onnx::TensorProto p;
  p.set_name("z");
  p.set_data_type(onnx::TensorProto::COMPLEX64);
  p.add_dims(1);
  p.set_raw_data(std::string(8, '\0'));
  std::ofstream(dir_ / "z.pb", std::ios::binary) << p.SerializeAsString();
  auto r = read_tensor_file(dir_ / "z.pb");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("holds complex64, which rung does not read"));
  // The temporary folder's random name may hold any digits; only the words after the path count.
  const auto words = r.error().message.find(": tensor 'z'");
  ASSERT_NE(words, std::string::npos) << r.error().message;
  const std::string said = r.error().message.substr(words);
  EXPECT_THAT(said, Not(HasSubstr("14")));
  // A tensor of no known type is refused by the writer by name, never written as "element type 0".
  Tensor bad = sample(ElementType::kFloat);
  bad.type = ElementType::kUnsupported;
  auto w = write_tensor_file(bad, dir_ / "bad.pb");
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message, HasSubstr("element type rung cannot write"));
}

TEST_F(TensorTypesTest, NpyFilesHoldEveryTypeNumpyHas) {
  for (auto type : kAllTypes) {
    const Tensor t = sample(type, "arr");
    const fs::path file = dir_ / (std::string(element_type_name(type)) + ".npy");
    auto w = write_npy_file(t, file);
    const bool float8 = type >= ElementType::kFloat8E4M3FN && type <= ElementType::kFloat8E5M2FNUZ;
    const bool numpy_has = type != ElementType::kBFloat16 && !float8;
    if (!numpy_has) {
      ASSERT_FALSE(w) << element_type_name(type);
      EXPECT_THAT(w.error().message, HasSubstr(std::string("NumPy has no ") + element_type_name(type) + " dtype"));
      continue;
    }
    ASSERT_TRUE(w) << element_type_name(type) << ": " << w.error().message;
    auto back = read_npy_file(file);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->type, type) << element_type_name(type);
    EXPECT_EQ(back->shape, t.shape);
    EXPECT_EQ(back->bytes, t.bytes) << element_type_name(type);
    // NumPy's fixed-width bytes drop trailing NULs, as NumPy itself does; the rest survives.
    if (type == ElementType::kString) {
      EXPECT_EQ(back->strings, t.strings);
    }
  }
}

TEST_F(TensorTypesTest, NpyUnicodeStringsBecomeUtf8) {
  // np.save of np.array(["ab", "é"]): '<U2', UTF-32 code points, zero-padded.
  std::string header = "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string data = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  for (char32_t c : {U'a', U'b', U'\u00e9', U'\0'}) data.append(reinterpret_cast<const char*>(&c), 4);
  std::ofstream(dir_ / "u.npy", std::ios::binary) << data;
  auto t = read_npy_file(dir_ / "u.npy");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->type, ElementType::kString);
  EXPECT_EQ(t->strings, (std::vector<std::string>{"ab", "\xc3\xa9"}));
}

TEST(GeneratedInputs, EveryTypeIsGenerated) {
  ModelIo io;
  for (auto type : kAllTypes) io.inputs.push_back({std::string("in_") + element_type_name(type), type, {2, 2}, {"", ""}, {}, ""});
  auto inputs = make_inputs(io, InputSpec{}, 7);
  ASSERT_TRUE(inputs) << inputs.error().message;
  ASSERT_EQ(inputs->size(), io.inputs.size());
  for (const auto& t : *inputs) {
    EXPECT_TRUE(t.consistent()) << element_type_name(t.type);
    if (t.type == ElementType::kString) {
      for (const auto& s : t.strings) EXPECT_THAT(s, ::testing::MatchesRegex("s[0-3]"));
    } else if (is_floating_point(t.type)) {
      for (double v : t.to_doubles()) EXPECT_TRUE(v >= 0 && v <= 1) << element_type_name(t.type) << " " << v;
    } else {
      for (double v : t.to_doubles()) EXPECT_TRUE(v >= 0 && v <= 3) << element_type_name(t.type) << " " << v;
    }
  }
  // A sequence input cannot be generated: said with its type, by name.
  ModelIo seq;
  seq.inputs.push_back({"s", ElementType::kFloat, {}, {}, {Value::Kind::kSequence}, ""});
  auto none = make_inputs(seq, InputSpec{}, 7);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("input 's' is sequence of float32"));
}

TEST(Comparison, StringsCompareExactly) {
  Tensor a = sample(ElementType::kString), b = a;
  EXPECT_TRUE(compare_tensors(a, b, Tolerance::approximate()).faithful());
  b.strings[3] = "uni";
  auto c = compare_tensors(a, b, Tolerance::approximate());
  EXPECT_FALSE(c.faithful());
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_THAT(c.describe(), HasSubstr("1 of 6 strings differ (first at 3: 'ünï' vs 'uni')"));
}

TEST(Comparison, Float16IsHeldToItsOwnPrecisionAtLeast) {
  // One unit in the last place of a half at 1.0 is 2^-10: within float16's own bounds even at exact().
  const Tensor a = floats(ElementType::kFloat16, {1.0});
  EXPECT_TRUE(compare_tensors(a, floats(ElementType::kFloat16, {1.0 + std::ldexp(1.0, -10)}), Tolerance::exact()).faithful());
  EXPECT_TRUE(compare_tensors(a, floats(ElementType::kFloat16, {1.0 + 2 * std::ldexp(1.0, -10)}), Tolerance::exact()).faithful());
  EXPECT_FALSE(compare_tensors(a, floats(ElementType::kFloat16, {1.0 + 3 * std::ldexp(1.0, -10)}), Tolerance::exact()).faithful());
  // The same difference in float32 is a mismatch at exact().
  EXPECT_FALSE(compare_tensors(floats(ElementType::kFloat, {1.0}), floats(ElementType::kFloat, {1.0 + std::ldexp(1.0, -10)}), Tolerance::exact()).faithful());
}

TEST(Comparison, Bfloat16IsHeldToItsOwnPrecisionAtLeast) {
  const Tensor a = floats(ElementType::kBFloat16, {1.0});
  EXPECT_TRUE(compare_tensors(a, floats(ElementType::kBFloat16, {1.0 + 2 * std::ldexp(1.0, -7)}), Tolerance::onnx_backend()).faithful());
  EXPECT_FALSE(compare_tensors(a, floats(ElementType::kBFloat16, {1.0 + 3 * std::ldexp(1.0, -7)}), Tolerance::onnx_backend()).faithful());
  EXPECT_EQ(Tolerance::onnx_backend().for_type(ElementType::kFloat).rtol, 1e-3);  // float32 keeps the given bounds
}

TEST(Comparison, NanMatchesNanOnlyWhenTheToleranceSaysSo) {
  const Tensor a = floats(ElementType::kFloat, {std::nan(""), 1.0});
  EXPECT_TRUE(compare_tensors(a, a, Tolerance::onnx_backend()).faithful());
  EXPECT_TRUE(compare_tensors(a, a, Tolerance::close()).faithful());  // NaN at the same element: agreement by default
  Tolerance strict = Tolerance::close();
  strict.nan_equal = false;
  EXPECT_FALSE(compare_tensors(a, a, strict).faithful());
  EXPECT_FALSE(compare_tensors(a, floats(ElementType::kFloat, {1.0, 1.0}), Tolerance::onnx_backend()).faithful());
}

TEST(Comparison, TypesThatDifferAreNamed) {
  auto c = compare_tensors(floats(ElementType::kFloat, {1.0}), sample(ElementType::kUint16), Tolerance::close());
  EXPECT_FALSE(c.faithful());
  EXPECT_THAT(c.describe(), HasSubstr("element types differ: float32 [1] against uint16 [2, 3]"));
}

TEST(Comparison, ValuesCompareByStructureThenElements) {
  const Value one = Value::of(floats(ElementType::kFloat, {1.0}));
  const Value seq2 = Value::sequence("s", {one, one}), seq1 = Value::sequence("s", {one});
  EXPECT_TRUE(compare_values(seq2, seq2, Tolerance::close()).faithful());
  EXPECT_THAT(compare_values(seq2, seq1, Tolerance::close()).first_problem(), HasSubstr("a sequence of 2 against one of 1"));
  const Value none = Value::optional("o", std::nullopt), held = Value::optional("o", one);
  EXPECT_TRUE(compare_values(none, none, Tolerance::close()).faithful());
  EXPECT_THAT(compare_values(none, held, Tolerance::close()).first_problem(), HasSubstr("None against an optional value"));
  const Value other = Value::sequence("s", {one, Value::of(floats(ElementType::kFloat, {2.0}))});
  EXPECT_THAT(compare_values(seq2, other, Tolerance::close()).first_problem(), HasSubstr("output 's[1]'"));
}

TEST_F(TensorTypesTest, SequencesAndOptionalValuesRoundTripThroughPbFiles) {
  const Value seq = Value::sequence("seq", {Value::of(sample(ElementType::kUint32, "a")), Value::of(sample(ElementType::kUint32, "b"))});
  ASSERT_TRUE(write_value_file(seq, dir_ / "seq.pb"));
  auto back = read_value_file(dir_ / "seq.pb", Value::Kind::kSequence);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->describe(), "sequence of 2 (uint32 [2, 3], ...)");
  EXPECT_TRUE(compare_values(seq, *back, Tolerance::exact()).faithful());
  for (const Value& v : {Value::optional("o", std::nullopt), Value::optional("o", Value::of(sample(ElementType::kString, "o")))}) {
    ASSERT_TRUE(write_value_file(v, dir_ / "o.pb"));
    auto o = read_value_file(dir_ / "o.pb", Value::Kind::kOptional);
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(o->describe(), v.describe());
    EXPECT_TRUE(compare_values(v, *o, Tolerance::exact()).faithful());
  }
}

// Real sessions: one ONNX Runtime build for this process.
class TensorTypesSessionTest : public TensorTypesTest {
 protected:
  static void SetUpTestSuite() {
    auto p = test::install_runtime_1_30();
    ASSERT_TRUE(p) << p.error().message;
    process_ = *p;
  }

  Result<std::vector<Value>> run(test::ModelBuilder& m, const std::vector<Value>& inputs) {
    const fs::path file = m.save(dir_ / "m.onnx");
    SessionSettings settings;
    settings.rung = *find_rung("cpu");
    auto session = open_session(*process_, file, settings);
    if (!session) return session.error();
    auto prepared = prepare_session(std::move(*session));
    if (!prepared) return prepared.error();
    return run_session_values(*prepared, inputs);
  }

  static inline OrtProcess* process_ = nullptr;
};

TEST_F(TensorTypesSessionTest, StringsUnsignedAndBfloat16RunThroughOnnxRuntime) {
  using test::ElemType;
  test::ModelBuilder m(18);
  m.input("s", {2, 3}, ElemType::String).node("Identity", {"s"}, {"s_out"}).output("s_out", {2, 3}, ElemType::String);
  m.input("u", {2, 3}, ElemType::Uint64).node("Add", {"u", "u"}, {"u2"}).output("u2", {2, 3}, ElemType::Uint64);
  m.input("f", {1}, ElemType::Float).node("Cast", {"f"}, {"bf"}).attribute("to", int64_t{16}).output("bf", {1}, ElemType::BFloat16);
  m.input("h", {2, 3}, ElemType::Uint16).node("Identity", {"h"}, {"h_out"}).output("h_out", {2, 3}, ElemType::Uint16);
  Tensor u = sample(ElementType::kUint64, "u");
  auto out = run(m, {Value::of(sample(ElementType::kString, "s")), Value::of(u), Value::of(floats(ElementType::kFloat, {3.14159})),
                     Value::of(sample(ElementType::kUint16, "h"))});
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].tensor.strings, sample(ElementType::kString).strings);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ((*out)[1].tensor.view<std::uint64_t>()[i], 2 * u.view<std::uint64_t>()[i]);
  EXPECT_EQ((*out)[2].tensor.type, ElementType::kBFloat16);
  EXPECT_EQ((*out)[2].tensor.to_doubles(), (std::vector<double>{3.140625}));
  EXPECT_EQ((*out)[3].tensor.bytes, sample(ElementType::kUint16).bytes);
}

TEST_F(TensorTypesSessionTest, SequencesAndOptionalValuesRunThroughOnnxRuntime) {
  using test::ElemType;
  test::ModelBuilder m(18);
  m.sequence_input("seq", ElemType::Float).node("SequenceLength", {"seq"}, {"n"}).output("n", {}, ElemType::Int64);
  m.input("x", {1}, ElemType::Float).node("SequenceConstruct", {"x", "x", "x"}, {"made"}).sequence_output("made", ElemType::Float);
  m.optional_input("opt", ElemType::Float).node("OptionalHasElement", {"opt"}, {"has"}).output("has", {}, ElemType::Bool);
  m.node("Optional", {"x"}, {"wrapped"}).optional_output("wrapped", ElemType::Float);
  const Value x = Value::of(floats(ElementType::kFloat, {2.5}));
  Value named_x = x;
  named_x.name = named_x.tensor.name = "x";
  const Value seq = Value::sequence("seq", {x, x});
  for (const bool given : {false, true}) {
    auto out = run(m, {seq, named_x, Value::optional("opt", given ? std::optional<Value>(x) : std::nullopt)});
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_EQ(out->size(), 4u);
    EXPECT_EQ((*out)[0].tensor.view<std::int64_t>()[0], 2);
    EXPECT_EQ((*out)[1].describe(), "sequence of 3 (float32 [1], ...)");
    EXPECT_EQ((*out)[2].tensor.view<std::uint8_t>()[0], given ? 1 : 0) << "an optional None is left out of the feeds";
    EXPECT_EQ((*out)[3].describe(), "optional (float32 [1])");
  }
}

}  // namespace
}  // namespace rung
