// The readers of outside data, each rule at its boundary: JSON nesting, values
// of the wrong kind or range, paths that are not files, tensor shapes that
// overflow or exceed the limit, input-spec keys the model does not have.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "jobs/target.h"
#include "os/json_input.h"
#include "os/read_file.h"
#include "rung/image.h"
#include "rung/input_spec.h"
#include "rung/tensor.h"
#include "session/inputs.h"
#include "session/npy_file.h"
#include "session/placement.h"
#include "session/tensor_file.h"
#include "test_support.h"
#include "rung/setting_names.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string nested(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(BoundedJson, NestingUpToTheLimitParsesOneMoreIsRefused) {
  EXPECT_TRUE(parse_json(nested(kMaxJsonDepth)).ok());
  auto deeper = parse_json(nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(deeper.ok());
  EXPECT_EQ(deeper.error().message, "nested deeper than 64 levels");
  EXPECT_FALSE(parse_json(nested(100'000)).ok());
  EXPECT_FALSE(parse_ordered_json(nested(100'000)).ok());
}

TEST(BoundedJson, BracketsInsideStringsDoNotCount) {
  EXPECT_TRUE(parse_json("[\"" + std::string(1000, '[') + "\\\"]\"]").ok());
}

TEST(BoundedJson, NotJsonSaysSo) {
  auto r = parse_json("{\"a\": ");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not valid JSON"));
}

TEST(BoundedJson, WholeNumbersAreCheckedBeforeAnyCast) {
  EXPECT_EQ(json_integer(nlohmann::json(5), 1, 10), 5);
  EXPECT_EQ(json_integer(nlohmann::json(5.0), 1, 10), 5);
  EXPECT_EQ(json_integer(nlohmann::json(1.5), 1, 10), std::nullopt);
  EXPECT_EQ(json_integer(nlohmann::json(11), 1, 10), std::nullopt);
  EXPECT_EQ(json_integer(nlohmann::json(0), 1, 10), std::nullopt);
  EXPECT_EQ(json_integer(nlohmann::json(1e300), 0, INT64_MAX), std::nullopt);
  EXPECT_EQ(json_integer(nlohmann::json(9223372036854775808.0), 0, INT64_MAX), std::nullopt);
  EXPECT_EQ(json_integer(nlohmann::json(18446744073709551615ull), 0, INT64_MAX), std::nullopt);
  EXPECT_EQ(json_integer(nlohmann::json("5"), 0, 10), std::nullopt);
}

// Found by fuzz/job-file.cc: nlohmann's own reader cast 1.5e77 to an enum (undefined
// behaviour). Job and result files read every integer and enum as a whole number that fits.
TEST(JobFileForms, IntegersAndEnumsAreWholeNumbersThatFit) {
  nlohmann::json spec = RungSpec{};
  auto read_with = [&](const char* key, nlohmann::json value) {
    nlohmann::json j = spec;
    j[key] = std::move(value);
    return j;
  };
  EXPECT_NO_THROW((void)read_with("append", 2).get<RungSpec>());
  EXPECT_NO_THROW((void)read_with("append", 2.0).get<RungSpec>());  // a float holding a whole number, as JsonFields takes it
  EXPECT_THROW((void)read_with("append", 1.5e77).get<RungSpec>(), nlohmann::json::exception);
  EXPECT_THROW((void)read_with("append", 2.5).get<RungSpec>(), nlohmann::json::exception);
  EXPECT_THROW((void)read_with("append", "2").get<RungSpec>(), nlohmann::json::exception);
  EXPECT_THROW((void)read_with("form", 4294967296LL).get<RungSpec>(), nlohmann::json::exception);  // past an int

  JobTarget target;
  nlohmann::json t = target;
  t["threads"] = 2147483647;
  EXPECT_EQ(t.get<JobTarget>().threads, 2147483647);
  t["threads"] = 2147483648LL;
  EXPECT_THROW((void)t.get<JobTarget>(), nlohmann::json::exception);
  t["threads"] = -1e300;
  EXPECT_THROW((void)t.get<JobTarget>(), nlohmann::json::exception);

  // Inside containers too: an input spec's dims and a result's placement.
  nlohmann::json inputs = InputSpec{};
  inputs["dims"] = {{"x:1", 1e30}};
  EXPECT_THROW((void)inputs.get<InputSpec>(), nlohmann::json::exception);
  inputs["dims"] = {{"x:1", 64}};
  EXPECT_EQ(inputs.get<InputSpec>().dims.at("x:1"), 64);
  nlohmann::json share = {{"provider", "CPUExecutionProvider"}, {"nodes", 1e20}, {"kernel_us", 3.5}};
  EXPECT_THROW((void)share.get<ProviderShare>(), nlohmann::json::exception);
}

TEST(BoundedJson, FieldsNameTheFirstProblemAndUnknownKeys) {
  const auto j = nlohmann::json::parse(R"({"a": "x", "b": 2, "c": [1, 2]})");
  {
    JsonFields f(j, "thing");
    (void)f.integer("a", 0, 10);
    (void)f.integer("b", 0, 10);
    EXPECT_EQ(f.finish().error().message, "thing: 'a' must be a whole number from 0 to 10, not \"x\"");
  }
  {
    JsonFields f(j, "thing");
    (void)f.text("a");
    (void)f.integer("b", 0, 10);
    EXPECT_THAT(f.finish().error().message, HasSubstr("unknown key 'c'"));
  }
  {
    JsonFields f(j, "thing");
    (void)f.text("missing");
    EXPECT_EQ(f.problems().error().message, "thing: lacks 'missing'");
  }
  {
    JsonFields f(j, "thing");
    EXPECT_EQ(f.array("c", 1), nullptr);
    EXPECT_EQ(f.problems().error().message, "thing: 'c' holds 2 entries; at most 1 make sense");
  }
  const nlohmann::json list = nlohmann::json::array();
  JsonFields not_object(list, "thing");
  EXPECT_EQ(not_object.finish().error().message, "thing: must be a JSON object");
}

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-outside-data"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FilesTest, APathThatIsNotARegularFileSaysWhatItIs) {
  EXPECT_EQ(read_regular_file(dir_, 100).error().message, dir_.string() + ": is a directory, not a file");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(read_regular_file(dir_ / "fifo", 100).error().message, (dir_ / "fifo").string() + ": is a FIFO, not a file");
  EXPECT_EQ(read_regular_file(dir_ / "gone", 100).error().message, (dir_ / "gone").string() + ": does not exist");
  std::ofstream(dir_ / "big") << std::string(101, 'x');
  EXPECT_THAT(read_regular_file(dir_ / "big", 100).error().message, HasSubstr("is 101 bytes; rung reads at most 100 bytes here"));
  EXPECT_EQ(*read_regular_file(dir_ / "big", 101), std::string(101, 'x'));
  auto json = read_json_file(dir_);
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(json.error().message, HasSubstr("is a directory"));
  EXPECT_THAT(json.error().message, ::testing::Not(HasSubstr("JSON")));
}

TEST(TensorSize, ElementCountIsCheckedArithmetic) {
  EXPECT_EQ(*element_count({2, 3, 4}), 24u);
  EXPECT_EQ(*element_count({}), 1u);
  EXPECT_EQ(*element_count({0, INT64_MAX, INT64_MAX}), 0u);
  EXPECT_EQ(*element_count({INT64_MAX, INT64_MAX, 0}), 0u);  // zero after an overflowing prefix
  EXPECT_EQ(element_count({-1, 4}).error().message, "shape [-1, 4] has a negative dimension");
  EXPECT_EQ(element_count({1ll << 62, 4}).error().message, "shape [4611686018427387904, 4] has more than 2^63 elements");
  EXPECT_EQ(element_count({1ll << 32, 1ll << 32}).error().message, "shape [4294967296, 4294967296] has more than 2^63 elements");
  EXPECT_EQ(*element_count({1ll << 31, 1ll << 31}), 1ull << 62);
}

TEST(TensorSize, TheLimitIsInclusiveAndNamesWhatWasAskedFor) {
  EXPECT_EQ(*tensor_bytes("input 'x'", ElementType::kFloat, {256, 1024}, 1 << 20), 1u << 20);
  auto over = tensor_bytes("input 'x'", ElementType::kFloat, {256, 1025}, 1 << 20);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message,
            "input 'x': float32 [256, 1025] would take 1.0 MiB, above the limit of 1.0 MiB for one tensor");
  // Under a front that names the setting (the CLI's flag), the message says how to raise it; the engine's has none.
  use_setting_names([](Setting s, std::string_view) -> std::string { return s == Setting::kMaxTensorMb ? "--max-tensor-mb" : ""; });
  EXPECT_THAT(tensor_bytes("input 'x'", ElementType::kFloat, {256, 1025}, 1 << 20).error().message,
              ::testing::EndsWith("for one tensor (raise it with --max-tensor-mb)"));
  use_setting_names(nullptr);
  EXPECT_THAT(tensor_bytes("input 'x'", ElementType::kFloat, {256, 1025}, 1 << 20).error().message, ::testing::EndsWith("for one tensor"));
  // Bytes overflow although elements do not.
  EXPECT_FALSE(tensor_bytes("t", ElementType::kDouble, {1ll << 61}, UINT64_MAX).ok());
  Tensor t{"t", ElementType::kFloat, {2, 2}, std::vector<std::byte>(16), {}};
  EXPECT_TRUE(t.consistent());
  t.shape = {1ll << 62, 4};
  EXPECT_FALSE(t.consistent());  // the old wrap-around made this 0 elements of 0 bytes
}

ModelIo model_io() {
  ModelIo io;
  io.inputs = {{"x", ElementType::kFloat, {-1, 3, -1, -1}, {"batch", "", "height", "width"}, {}, {}}, {"sr", ElementType::kInt64, {}, {}, {}, {}}};
  return io;
}

std::string spec_error(const std::string& json) {
  auto spec = InputSpec::from_json_text(json);
  if (!spec) return spec.error().message;
  auto s = check_input_spec(model_io(), *spec);
  return s ? "" : s.error().message;
}

TEST(InputSpecKeys, EachBadKeyIsNamed) {
  EXPECT_EQ(spec_error(R"({"dims": {"x:2": 640, "width": 480}, "values": {"sr": 16000}})"), "");
  EXPECT_THAT(spec_error(R"({"dims": {"x:99": 2}})"), HasSubstr("dims key 'x:99': input 'x' has 4 axes ([-1, 3, -1, -1]), so no axis 99"));
  EXPECT_THAT(spec_error(R"({"dims": {"x:abc": 2}})"), HasSubstr("dims: key 'x:abc' is neither a dimension's name nor INPUT:AXIS"));
  EXPECT_THAT(spec_error(R"({"dims": {"x:-1": 2}})"), HasSubstr("key 'x:-1'"));
  EXPECT_THAT(spec_error(R"({"dims": {"x:2": 1.5}})"), HasSubstr("dims.x:2 must be a positive whole number, not 1.5"));
  EXPECT_THAT(spec_error(R"({"dims": {"x:2": 0}})"), HasSubstr("dims.x:2 must be a positive whole number"));
  EXPECT_THAT(spec_error(R"({"dims": {"x:2": "640"}})"), HasSubstr("dims.x:2 must be a positive whole number"));
  EXPECT_THAT(spec_error(R"({"dims": {"y:1": 2}})"), HasSubstr("dims key 'y:1' names input 'y', which the model does not have (its inputs: 'x', 'sr')"));
  EXPECT_THAT(spec_error(R"({"dims": {"depth": 2}})"), HasSubstr("dims key 'depth' is no symbolic dimension of the model's inputs (x: batch, height, width; sr: none)"));
  EXPECT_THAT(spec_error(R"({"dims": {"x:1": 4}})"), HasSubstr("dims key 'x:1' asks for 4, but axis 1 of input 'x' is fixed at 3"));
  EXPECT_EQ(spec_error(R"({"dims": {"x:1": 3}})"), "");
  EXPECT_THAT(spec_error(R"({"values": {"rate": 16000}})"), HasSubstr("values key 'rate' is not an input of the model"));
  EXPECT_THAT(spec_error(R"({"values": {"sr": "16000"}})"), HasSubstr("values.sr must be a number or a list of numbers"));
  EXPECT_THAT(spec_error(R"({"dims": []})"), HasSubstr("dims must be an object"));
  EXPECT_THAT(spec_error(R"({"max_tensor_mb": 0})"), HasSubstr("max_tensor_mb must be a whole number from 1"));
}

TEST(InputSizes, AShapeAboveTheLimitIsRefusedBeforeAllocatingNamingTheInput) {
  auto spec = *InputSpec::from_json_text(R"({"dims": {"x:2": 30000, "x:3": 30000}, "values": {"sr": 16000}})");
  auto r = make_inputs(model_io(), spec, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "input 'x': float32 [1, 3, 30000, 30000] would take 10.1 GiB, above the limit of 1.0 GiB for one tensor");
  spec.max_tensor_bytes = 64ull << 30;  // raised: still not overflowing, still refused by nothing but memory
  spec.dims["x:2"] = 1ll << 40;
  spec.dims["x:3"] = 1ll << 40;
  EXPECT_THAT(make_inputs(model_io(), spec, 1).error().message, HasSubstr("more than 2^63 elements"));
  auto small = *InputSpec::from_json_text(R"({"dims": {"x:2": 8, "x:3": 8}, "values": {"sr": 16000}, "max_tensor_mb": 1})");
  EXPECT_TRUE(make_inputs(model_io(), small, 1).ok());
  EXPECT_EQ(small.canonical(), R"({"dims":{"x:2":8,"x:3":8},"max_tensor_mb":1,"tensors":"","values":{"sr":[16000.0]}})");
}

TEST(InputSizes, SpecValuesAreSaturatedToTheElementType) {
  ModelIo io;
  io.inputs = {{"n", ElementType::kInt8, {2}, {}, {}, {}}};
  InputSpec spec;
  spec.values["n"] = {1e300, -1e300};
  auto r = make_inputs(io, spec, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT((*r)[0].to_doubles(), ::testing::ElementsAre(127, -128));
}

std::string npy(const std::string& descr, const std::string& shape, std::size_t data_bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  header.resize(((header.size() + 11) / 64 + 1) * 64 - 11, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data_bytes, '\0');
}

TEST_F(FilesTest, NpyHeadersClaimingHugeShapesAreRefusedBeforeTheDataIsRead) {
  EXPECT_TRUE(parse_npy(npy("<f4", "(2, 3)", 24), "a.npy", "a").ok());
  EXPECT_TRUE(parse_npy(npy("<f4", "(3,)", 12), "a.npy", "a").ok());
  EXPECT_THAT(parse_npy(npy("<f4", "(4611686018427387904, 4)", 0), "a.npy", "a").error().message, HasSubstr("more than 2^63 elements"));
  EXPECT_THAT(parse_npy(npy("<f4", "(100000, 100000)", 16), "a.npy", "a").error().message,
              HasSubstr("a.npy: float32 [100000, 100000] would take 37.3 GiB, above the limit"));
  EXPECT_THAT(parse_npy(npy("<f4", "(99999999999999999999,)", 0), "a.npy", "a").error().message, HasSubstr("shape dimension"));
  EXPECT_THAT(parse_npy(npy("<f4", "(-2,)", 0), "a.npy", "a").error().message, HasSubstr("shape dimension '-2'"));
  std::ofstream(dir_ / "big.npy", std::ios::binary) << npy("<f8", "(1000, 1000)", 8'000'000);
  EXPECT_TRUE(read_npy_file(dir_ / "big.npy").ok());
  EXPECT_THAT(read_npy_file(dir_ / "big.npy", 1 << 20).error().message, HasSubstr("float64 [1000, 1000] would take 7.6 MiB, above the limit of 1.0 MiB"));
}

TEST_F(FilesTest, PbTensorsClaimingHugeShapesAreRefused) {
  // A float TensorProto with these dims and no data, by hand: rung's writer refuses such a tensor.
  auto claim = [&](const std::vector<std::uint64_t>& dims) {
    std::string pb;
    for (auto d : dims) {
      pb += '\x08';
      for (; d >= 0x80; d >>= 7) pb += static_cast<char>((d & 0x7f) | 0x80);
      pb += static_cast<char>(d);
    }
    pb += std::string("\x10\x01\x42\x01x", 5);
    std::ofstream(dir_ / "x.pb", std::ios::binary | std::ios::trunc) << pb;
  };
  claim({1ull << 62, 4});
  EXPECT_THAT(read_tensor_file(dir_ / "x.pb").error().message, HasSubstr("more than 2^63 elements"));
  claim({100000, 100000});
  EXPECT_THAT(read_tensor_file(dir_ / "x.pb").error().message, HasSubstr("float32 [100000, 100000] would take 37.3 GiB"));
  Tensor t{"x", ElementType::kFloat, {300, 1000}, {}, {}};
  t.bytes.resize(1'200'000);
  ASSERT_TRUE(write_tensor_file(t, dir_ / "x.pb").ok());
  EXPECT_TRUE(read_tensor_file(dir_ / "x.pb").ok());
  EXPECT_THAT(read_tensor_file(dir_ / "x.pb", 1 << 20).error().message, ::testing::EndsWith("rung reads at most 1.1 MiB for a tensor file"));
}

TEST_F(FilesTest, ImagesAreCheckedByTheirHeaderBeforeDecoding) {
  Image img{300, 200, 3, std::vector<std::uint8_t>(300 * 200 * 3, 7)};
  ASSERT_TRUE(write_png(img, dir_ / "i.png").ok());
  EXPECT_TRUE(read_image(dir_ / "i.png").ok());
  EXPECT_THAT(read_image(dir_ / "i.png", 3, 100'000).error().message, HasSubstr("uint8 [200, 300, 3] would take"));
  // A PNG header claiming 4000 x 1000 pixels, with nothing behind it: refused by
  // the header, against a 1 MiB limit. (stb_image itself refuses PNGs above 16 MiB.)
  std::string png = test::read_file(dir_ / "i.png");
  const unsigned char size[8] = {0, 0, 0x0f, 0xa0, 0, 0, 0x03, 0xe8};
  for (int i = 0; i < 8; ++i) png[16 + i] = static_cast<char>(size[i]);
  auto huge = decode_image(png, "huge.png", 3, 1 << 20);
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.error().message, HasSubstr("huge.png: uint8 [1000, 4000, 3] would take 11.4 MiB"));
}

// Found by fuzz/image.cc: stb_image's PNM reader went past the buffer on a
// six-digit maxval. rung decodes PNG, JPEG and BMP only, told by their first bytes.
TEST_F(FilesTest, OnlyPngJpegAndBmpAreDecoded) {
  EXPECT_THAT(decode_image(std::string("P533\n311\n311070"), "odd.pgm", 3, 1 << 20).error().message,
              HasSubstr("odd.pgm: not a PNG, JPEG or BMP image (rung decodes only these)"));
  EXPECT_THAT(decode_image(std::string("GIF89a\x01\x00\x01\x00\x00\x00\x00", 13), "a.gif", 3, 1 << 20).error().message,
              HasSubstr("a.gif: not a PNG, JPEG or BMP image"));
  EXPECT_FALSE(is_image_file("scan.pgm"));
  EXPECT_TRUE(is_image_file("scan.JPG"));
  // A BMP still decodes: 1 x 1, 24 bits, one blue pixel.
  std::string bmp("BM", 2);
  auto le32 = [&](std::uint32_t v) { for (int i = 0; i < 4; ++i) bmp += static_cast<char>((v >> (8 * i)) & 0xff); };
  auto le16 = [&](std::uint16_t v) { bmp += static_cast<char>(v & 0xff); bmp += static_cast<char>(v >> 8); };
  le32(58); le32(0); le32(54); le32(40); le32(1); le32(1); le16(1); le16(24); le32(0); le32(4); le32(2835); le32(2835); le32(0); le32(0);
  bmp += std::string("\xff\x00\x00\x00", 4);
  auto one = decode_image(bmp, "one.bmp", 3, 1 << 20);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->pixels, (std::vector<std::uint8_t>{0, 0, 255}));
}

// Found by fuzz/tensor-pb.cc and fuzz/npy.cc: a tensor with no elements copied
// into an empty vector's null pointer (undefined behaviour, caught by UBSan).
TEST_F(FilesTest, TensorsWithNoElementsReadAsEmpty) {
  Tensor t{"x", ElementType::kUint8, {2, 0}, {}, {}};
  ASSERT_TRUE(write_tensor_file(t, dir_ / "empty.pb").ok());
  auto pb = read_tensor_file(dir_ / "empty.pb");
  ASSERT_TRUE(pb.ok()) << pb.error().message;
  EXPECT_EQ(pb->shape, (std::vector<std::int64_t>{2, 0}));
  EXPECT_TRUE(pb->bytes.empty());
  auto n = parse_npy(npy("|u1", "(2, 0)", 0), "e.npy", "e");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->shape, (std::vector<std::int64_t>{2, 0}));
  EXPECT_TRUE(n->bytes.empty());
}

TEST(Preprocessing, SizesAreBoundedAndTheCanvasIsCheckedBeforeItIsMade) {
  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "resize", "width": 1.5, "height": 4})").error().message,
              HasSubstr("'width' must be a whole number from 0 to 65536"));
  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "resize", "width": 1e300, "height": 4})").error().message,
              HasSubstr("'width' must be a whole number"));
  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "limit", "multiple": 0})").error().message, HasSubstr("'multiple'"));
  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "limit", "scale": 1e300})").error().message, HasSubstr("within ±1e6"));
  auto big = *ImagePreprocess::from_json_text(R"({"fit": "resize", "width": 65536, "height": 65536})");
  EXPECT_THAT(image_tensor_shape(10, 10, big, "page.png").error().message, HasSubstr("page.png: float32 [1, 3, 65536, 65536] would take"));
  // PP-OCR's recogniser fit on a sliver 1 px tall: the width it asks for is beyond any canvas.
  auto height = *ImagePreprocess::from_json_text(R"({"fit": "height", "height": 48, "width": 320})");
  EXPECT_THAT(image_tensor_shape(60000, 1, height, "line.png").error().message, HasSubstr("would be wider or taller than 65536 px"));
  EXPECT_EQ(*image_tensor_shape(100, 20, height, "line.png"), (std::vector<std::int64_t>{1, 3, 48, 320}));
}

}  // namespace
}  // namespace rung
