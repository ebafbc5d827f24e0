// The decoders on their own: geometry, CTC, PP-OCR box extraction, matching,
// scores; the image path (decode, crop, resize, preprocessing); .npy; the gate
// file's checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "parity/gate_file.h"
#include "parity_test_support.h"
#include "rung/decode.h"
#include "rung/geometry.h"
#include "rung/image.h"
#include "session/npy_file.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Geometry, IouOfOverlappingDisjointAndRotatedQuads) {
  EXPECT_NEAR(quad_iou(axis_aligned_quad(0, 0, 2, 2), axis_aligned_quad(1, 1, 3, 3)), 1.0 / 7.0, 1e-12);
  EXPECT_EQ(quad_iou(axis_aligned_quad(0, 0, 1, 1), axis_aligned_quad(2, 2, 3, 3)), 0.0);
  // A diamond inside the square it is inscribed in: half the square's area.
  const Quad diamond{Point{1, 0}, Point{2, 1}, Point{1, 2}, Point{0, 1}};
  EXPECT_NEAR(quad_iou(diamond, axis_aligned_quad(0, 0, 2, 2)), 0.5, 1e-12);
  EXPECT_NEAR(quad_iou(diamond, diamond), 1.0, 1e-12);
}

TEST(Geometry, MinimumAreaRectangleOfARotatedRectangle) {
  const double a = 20 * std::numbers::pi / 180;
  std::vector<Point> pts;
  for (int u = 0; u <= 40; ++u) {
    for (int v = 0; v <= 10; ++v) pts.push_back({50 + u * std::cos(a) - v * std::sin(a), 50 + u * std::sin(a) + v * std::cos(a)});
  }
  const Quad q = min_area_rect(pts);
  EXPECT_NEAR(quad_width(q), 40, 1e-6);
  EXPECT_NEAR(quad_height(q), 10, 1e-6);
  EXPECT_NEAR(std::atan2(q[1].y - q[0].y, q[1].x - q[0].x), a, 1e-6);
}

TEST(Ctc, CollapsesRepeatsDropsBlanksAndDecodesUtf8Symbols) {
  const auto chars = CharacterList::from_symbols({"a", "中"}, true);  // blank, a, 中, " "
  ASSERT_EQ(chars.classes(), 4u);
  // Per step, the winning class: a a blank a 中 中 space blank.
  const std::vector<std::size_t> winners{1, 1, 0, 1, 2, 2, 3, 0};
  std::vector<float> scores(winners.size() * 4, 0.01f);
  for (std::size_t t = 0; t < winners.size(); ++t) scores[t * 4 + winners[t]] = 0.8f;
  const TextLine line = ctc_greedy_decode(scores, winners.size(), chars);
  EXPECT_EQ(line.text, "aa中 ");
  EXPECT_NEAR(line.score, 0.8, 1e-6);
  EXPECT_EQ(code_points(line.text), 4u);
}

TEST(Ctc, EditDistanceCountsCodePoints) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("中文", "中x"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Ctc, CharacterListFileNamesItselfWhenMissing) {
  auto r = CharacterList::from_file("/nonexistent/keys.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/keys.txt"));
}

TEST(TextBoxes, ConfidentRegionsBecomeGrownBoxesFaintAndTinyOnesDoNot) {
  const std::size_t h = 64, w = 64;
  std::vector<float> map(h * w, 0.01f);
  auto fill = [&](std::size_t y0, std::size_t y1, std::size_t x0, std::size_t x1, float p) {
    for (std::size_t y = y0; y < y1; ++y) {
      for (std::size_t x = x0; x < x1; ++x) map[y * w + x] = p;
    }
  };
  fill(10, 16, 5, 46, 0.9f);   // a text line, 41 x 6
  fill(30, 50, 10, 31, 0.9f);  // a block, 21 x 20
  fill(55, 62, 40, 60, 0.4f);  // above 0.3 but its mean is under 0.6: dropped
  fill(2, 4, 60, 62, 0.9f);    // 2 x 2: under min_size
  const auto boxes = extract_text_boxes(map, h, w);
  ASSERT_EQ(boxes.size(), 2u);
  // The line's rectangle through pixel centres is 40 x 5; it grows by 200 * 1.5 / 90 on each side.
  EXPECT_NEAR(quad_width(boxes[0].quad), 40 + 2 * 200 * 1.5 / 90, 1.5);
  EXPECT_NEAR(quad_height(boxes[0].quad), 5 + 2 * 200 * 1.5 / 90, 1.5);
  EXPECT_NEAR(boxes[0].score, 0.9, 1e-6);
  EXPECT_NEAR(boxes[1].quad[0].x, 10 - 20 * 19 * 1.5 / 78, 1.0);
}

TEST(TextBoxes, ARotatedLineGivesARotatedBox) {
  const std::size_t h = 80, w = 80;
  std::vector<float> map(h * w, 0.0f);
  const double a = 15 * std::numbers::pi / 180;
  for (std::size_t y = 0; y < h; ++y) {
    for (std::size_t x = 0; x < w; ++x) {
      const double dx = static_cast<double>(x) - 10.0, dy = static_cast<double>(y) - 20.0;
      const double u = dx * std::cos(a) + dy * std::sin(a), v = -dx * std::sin(a) + dy * std::cos(a);
      if (u >= 0 && u <= 50 && v >= 0 && v <= 8) map[y * w + x] = 0.95f;
    }
  }
  const auto boxes = extract_text_boxes(map, h, w);
  ASSERT_EQ(boxes.size(), 1u);
  const Quad& q = boxes[0].quad;
  EXPECT_NEAR(std::atan2(q[1].y - q[0].y, q[1].x - q[0].x), a, 0.05);
}

TEST(TextBoxes, AHoleIsABorderOfItsOwnAsInPpOcrContours) {
  // A 20 x 20 region with a 3 x 3 hole below the threshold: OpenCV's RETR_LIST
  // gives the hole's border too, and its 4 x 4 rectangle scores 0.67 (16 pixels
  // at 0.9, 9 at 0.25), so PP-OCR keeps a box for it; a larger hole scores too low.
  const std::size_t h = 40, w = 40;
  auto ring = [&](std::size_t hole) {
    std::vector<float> map(h * w, 0.0f);
    for (std::size_t y = 10; y < 30; ++y) {
      for (std::size_t x = 10; x < 30; ++x) map[y * w + x] = 0.9f;
    }
    for (std::size_t y = 19; y < 19 + hole; ++y) {
      for (std::size_t x = 19; x < 19 + hole; ++x) map[y * w + x] = 0.25f;
    }
    return map;
  };
  const auto two = extract_text_boxes(ring(3), h, w);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(quad_width(two[0].quad), 19 + 2 * 361 * 1.5 / 76, 1.5);  // the outer border first, in raster order
  EXPECT_NEAR(quad_width(two[1].quad), 4 + 2 * 16 * 1.5 / 16, 1.5);
  EXPECT_NEAR(two[1].score, (16 * 0.9 + 9 * 0.25) / 25, 1e-6);
  EXPECT_EQ(extract_text_boxes(ring(6), h, w).size(), 1u);
}

TEST(TextBoxes, BoxesScaleToTheSourceImageBeforeRounding) {
  const std::size_t h = 32, w = 64;
  std::vector<float> map(h * w, 0.0f);
  for (std::size_t y = 10; y < 20; ++y) {
    for (std::size_t x = 10; x < 50; ++x) map[y * w + x] = 0.9f;
  }
  TextBoxOptions o;
  o.output_width = 160;   // the map is 0.4 of the source across
  o.output_height = 48;   // and 2/3 of it down
  const auto boxes = extract_text_boxes(map, h, w, o);
  ASSERT_EQ(boxes.size(), 1u);
  const double d = 39 * 9 * 1.5 / 96;  // the rectangle through pixel centres grows by this in map pixels
  EXPECT_EQ(boxes[0].quad[0].x, std::round((10 - d) * 2.5));
  EXPECT_EQ(boxes[0].quad[0].y, std::round((10 - d) * 1.5));
  EXPECT_EQ(boxes[0].quad[2].x, std::round((49 + d) * 2.5));
}

TEST(Matching, OneToOneByDecreasingIou) {
  const std::vector<Quad> ref{axis_aligned_quad(0, 0, 10, 10), axis_aligned_quad(20, 0, 30, 10), axis_aligned_quad(50, 50, 60, 60)};
  const std::vector<Quad> cand{axis_aligned_quad(21, 0, 31, 10), axis_aligned_quad(1, 0, 11, 10), axis_aligned_quad(0, 1, 10, 11),
                              axis_aligned_quad(80, 80, 90, 90)};
  const BoxMatch m = match_by_iou(ref, cand, 0.5);
  ASSERT_EQ(m.matched.size(), 2u);
  EXPECT_THAT(m.ref_only, ElementsAre(2u));
  EXPECT_THAT(m.cand_only, ElementsAre(2u, 3u));  // the second-best match for box 0 stays unmatched
  for (std::size_t k = 0; k < m.matched.size(); ++k) EXPECT_NEAR(m.iou[k], 90.0 / 110.0, 1e-9);
}

TEST(Matching, TheBestPairIsTakenBeforeWorseOnes) {
  // IoU(r0, c0) = 1, IoU(r0, c1) = IoU(r1, c1) = 8/12, IoU(r1, c0) = 6/14: taking the worst pair
  // first would pair r1 with c0 and r0 with c1.
  const std::vector<Quad> ref{axis_aligned_quad(0, 0, 10, 10), axis_aligned_quad(4, 0, 14, 10)};
  const std::vector<Quad> cand{axis_aligned_quad(0, 0, 10, 10), axis_aligned_quad(2, 0, 12, 10)};
  const BoxMatch m = match_by_iou(ref, cand, 0.3);
  ASSERT_EQ(m.matched.size(), 2u);
  EXPECT_EQ(m.matched[0], std::make_pair(std::size_t{0}, std::size_t{0}));
  EXPECT_EQ(m.matched[1], std::make_pair(std::size_t{1}, std::size_t{1}));
  EXPECT_NEAR(m.iou[0], 1.0, 1e-12);
  EXPECT_NEAR(m.iou[1], 8.0 / 12.0, 1e-12);
}

TEST(Scores, ANanScoreRanksBelowEveryNumber) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(top_k(std::vector<double>{nan, 0.1}, 1), ElementsAre(1u));
  EXPECT_THAT(top_k(std::vector<double>{nan, -1e300}, 1), ElementsAre(1u));
  EXPECT_THAT(top_k(std::vector<double>{0.1, nan, 0.9}, 2), ElementsAre(2u, 0u));
}

TEST(Scores, TopKActivationsCosineAndMasks) {
  const std::vector<double> s{0.1, 0.5, 0.5, 0.2};
  EXPECT_THAT(top_k(s, 2), ElementsAre(1u, 2u));
  const auto p = activate(s, Activation::kSoftmax);
  EXPECT_NEAR(p[0] + p[1] + p[2] + p[3], 1.0, 1e-12);
  EXPECT_NEAR(activate(std::vector<double>{0.0}, Activation::kSigmoid)[0], 0.5, 1e-12);
  EXPECT_FALSE(activation_from_name("relu").ok());
  EXPECT_NEAR(cosine_similarity(std::vector<double>{1, 0}, std::vector<double>{0, 1}), 0.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(std::vector<double>{1, 2}, std::vector<double>{2, 4}), 1.0, 1e-12);
  EXPECT_EQ(cosine_similarity(std::vector<double>{0, 0}, std::vector<double>{0, 0}), 1.0);
  const std::vector<std::uint8_t> a{1, 1, 0, 0}, b{1, 0, 1, 0}, none{0, 0, 0, 0};
  EXPECT_NEAR(mask_iou(a, b), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(mask_iou(none, none), 1.0);
}

class ImageTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-image"); }
  void TearDown() override { fs::remove_all(dir_); }
  static Image gradient(int w, int h) {
    Image img{w, h, 3, {}};
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        img.pixels.push_back(static_cast<std::uint8_t>(x * 10));
        img.pixels.push_back(static_cast<std::uint8_t>(y * 10));
        img.pixels.push_back(200);
      }
    }
    return img;
  }
  fs::path dir_;
};

TEST_F(ImageTest, PngRoundTripsAndARealPhotographDecodes) {
  const Image img = gradient(7, 5);
  ASSERT_TRUE(write_png(img, dir_ / "g.png").ok());
  auto back = read_image(dir_ / "g.png");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->pixels, img.pixels);
  auto photo = read_image(test::skimage_image("coffee.png"));
  ASSERT_TRUE(photo.ok()) << photo.error().message;
  EXPECT_EQ(photo->width, 600);
  EXPECT_EQ(photo->height, 400);
  auto gray = read_image(test::skimage_image("page.png"), 1);
  ASSERT_TRUE(gray.ok());
  EXPECT_EQ(gray->channels, 1);
}

TEST_F(ImageTest, CropsAnUprightQuadAndTurnsATallOne) {
  const Image img = gradient(20, 20);
  const Image crop = crop_quad(img, axis_aligned_quad(2, 3, 12, 8));
  ASSERT_EQ(crop.width, 10);
  ASSERT_EQ(crop.height, 5);
  EXPECT_EQ(crop.pixels[0], img.pixels[(3 * 20 + 2) * 3]);
  const Image tall = crop_quad(img, axis_aligned_quad(2, 2, 6, 18));
  EXPECT_EQ(tall.width, 16);
  EXPECT_EQ(tall.height, 4);
  EXPECT_EQ(resize_bilinear(Image{3, 3, 1, std::vector<std::uint8_t>(9, 77)}, 7, 5).pixels, std::vector<std::uint8_t>(35, 77));
}

TEST_F(ImageTest, PreprocessingFitsNormalisesAndLaysOut) {
  auto letterbox = ImagePreprocess::from_json_text(R"({"fit": "letterbox", "width": 16, "height": 16, "pad": 114,
      "channels": "BGR", "mean": [0.5, 0.25, 0], "std": [0.5, 0.5, 1]})");
  ASSERT_TRUE(letterbox.ok()) << letterbox.error().message;
  ImageGeometry g;
  const Tensor t = image_to_tensor(gradient(20, 10), *letterbox, "img", &g);
  EXPECT_THAT(t.shape, ElementsAre(1, 3, 16, 16));
  EXPECT_NEAR(g.scale_x, 0.8, 1e-12);
  EXPECT_EQ(g.offset_y, 4);
  const auto v = t.view<float>();
  EXPECT_NEAR(v[0], (114 / 255.0 - 0.5) / 0.5, 1e-6);                     // padding, first channel
  EXPECT_NEAR(v[static_cast<std::size_t>(4 * 16)], (200 / 255.0 - 0.5) / 0.5, 1e-6);  // BGR: blue first, on the first image row
  EXPECT_NEAR(g.to_source({8, 8}).y, 5, 1e-12);

  auto limit = ImagePreprocess::from_json_text(R"({"fit": "limit", "max_side": 960, "multiple": 32, "layout": "NHWC"})");
  ASSERT_TRUE(limit.ok());
  EXPECT_THAT(image_to_tensor(gradient(1000, 500), *limit, "x").shape, ElementsAre(1, 480, 960, 3));
  auto height = ImagePreprocess::from_json_text(R"({"fit": "height", "height": 48, "width": 320})");
  ASSERT_TRUE(height.ok());
  EXPECT_THAT(image_to_tensor(gradient(100, 20), *height, "x").shape, ElementsAre(1, 3, 48, 320));
  EXPECT_THAT(image_to_tensor(gradient(200, 20), *height, "x").shape, ElementsAre(1, 3, 48, 480));

  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "stretch"})").error().message, HasSubstr("unknown fit 'stretch'"));
  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "resize"})").error().message, HasSubstr("needs a positive width and height"));
  EXPECT_THAT(ImagePreprocess::from_json_text(R"({"fit": "resize", "width": 2, "height": 2, "mena": [0]})").error().message,
              HasSubstr("preprocessing: unknown key 'mena'"));
}

TEST_F(ImageTest, NpyFilesOfIntegersAndTheirErrors) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  const std::int64_t values[3] = {16000, -1, 7};
  npy.append(reinterpret_cast<const char*>(values), sizeof values);
  test::write_text(dir_ / "sr.npy", npy);
  auto t = read_npy_file(dir_ / "sr.npy");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "sr");
  EXPECT_EQ(t->type, ElementType::kInt64);
  EXPECT_EQ(t->view<std::int64_t>()[0], 16000);
  test::write_text(dir_ / "short.npy", npy.substr(0, npy.size() - 4));
  EXPECT_THAT(read_npy_file(dir_ / "short.npy").error().message, HasSubstr("holds 20 data bytes"));
  test::write_text(dir_ / "text.npy", "hello");
  EXPECT_THAT(read_npy_file(dir_ / "text.npy").error().message, HasSubstr("no NUMPY magic"));
}

TEST(GateFile, ProblemsAreNamed) {
  auto bad = [](const std::string& text) { return parse_gate_file(text, "/tmp", "g.json").error().message; };
  EXPECT_THAT(bad("{"), HasSubstr("g.json: not valid JSON"));
  EXPECT_THAT(bad(R"({"gates": []})"), HasSubstr("'gates' must be a non-empty list"));
  EXPECT_THAT(bad(R"({"gate": []})"), HasSubstr("unknown key 'gate'"));
  EXPECT_THAT(bad(R"({"gates": [{"output": "y"}]})"), HasSubstr("gate 1: names no 'decoder'"));
  EXPECT_THAT(bad(R"({"gates": [{"decoder": "slots", "output": "y"}]})"), HasSubstr("needs 'threshold'"));
  EXPECT_THAT(bad(R"({"gates": [{"decoder": "tensor", "atol": "big"}]})"), HasSubstr("gate 1 (tensor): 'atol' must be a finite number"));
  EXPECT_THAT(bad(R"({"gates": [{"decoder": "text", "output": "y", "characters": "nope.txt"}]})"), HasSubstr("/tmp/nope.txt"));
  EXPECT_THAT(bad(R"({"gates": [{"decoder": "boxes", "output": "p", "bands": [0, 32, 16]}]})"), HasSubstr("'bands' are increasing"));
  EXPECT_TRUE(parse_gate_file(R"({"model": "m", "gates": [{"decoder": "tensor", "outputs": ["y"]}]})", "/tmp", "g.json").ok());
}

TEST(GateFile, TheTextGateChecksTheCharacterListAgainstTheModel) {
  const auto dir = test::make_temp_dir("rung-gate-file");
  test::write_text(dir / "keys.txt", "a\nb\n");
  auto g = parse_gate_file(R"({"gates": [{"decoder": "text", "output": "y", "characters": "keys.txt"}]})", dir, "g.json");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ModelIo io;
  io.outputs.push_back({"y", ElementType::kFloat, {1, 20, 6}, {"", "", ""}, {}, {}});
  auto s = g->gates[0]->check(io);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("has 6 classes, but"));
  EXPECT_THAT(s.error().message, HasSubstr("gives 4 (blank + 3 symbols)"));
  fs::remove_all(dir);
}


// The gates fed in this process, without models: the rules themselves.
std::unique_ptr<ParityGate> gate_from(const std::string& json, const ModelIo& io) {
  auto g = parse_gate_file(json, "/tmp", "g.json");
  EXPECT_TRUE(g.ok()) << g.error().message;
  auto gate = std::move(g->gates.front());
  EXPECT_TRUE(gate->check(io).ok());
  return gate;
}

TEST(GateRules, TensorGatePassRateAndTheSmallestPassingTolerances) {
  ModelIo io;
  io.outputs.push_back({"y", ElementType::kFloat, {1, 2}, {"", ""}, {}, {}});
  auto gate = gate_from(R"({"gates": [{"decoder": "tensor", "atol": 1e-3, "rtol": 1e-3, "pass_rate": 0.9}]})", io);
  // Ten inputs: nine off by 2^-11 on 0.125 (relatively far, absolutely within), one off by 0.5 (outside both).
  for (int i = 0; i < 10; ++i) {
    const Tensor a = test::float_tensor("y", {1, 2}, {0.125f, 2.0f});
    const Tensor b = test::float_tensor("y", {1, 2}, {i == 3 ? 0.625f : 0.125f + 0.00048828125f, 2.0f});
    ASSERT_TRUE(gate->add("in" + std::to_string(i), {{"y", &a}}, {{"y", &b}}).ok());
  }
  const GateOutcome out = gate->finish();
  EXPECT_TRUE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("9 of 10 inputs within atol 0.001 AND rtol 0.001"));
  EXPECT_THAT(out.details[0], HasSubstr("would pass at atol 0.0004883 (rtol 0.001)"));  // the 9th smallest need, as 90% asks, rounded up
  EXPECT_THAT(out.details, ::testing::Contains(HasSubstr("failing inputs: in3")));
  EXPECT_THAT(out.details, ::testing::Contains(HasSubstr("every input passes at atol 0.5")));
  auto strict = gate_from(R"({"gates": [{"decoder": "tensor", "atol": 1e-3, "rtol": 1e-3}]})", io);
  const Tensor a = test::float_tensor("y", {1, 2}, {1.0f, NAN}), b = test::float_tensor("y", {1, 2}, {1.0f, NAN});
  ASSERT_TRUE(strict->add("nan", {{"y", &a}}, {{"y", &b}}).ok());
  const GateOutcome nan = strict->finish();
  EXPECT_TRUE(nan.passed) << nan.summary;  // NaN at the same element on both sides is agreement
  EXPECT_THAT(nan.details, ::testing::Contains(HasSubstr("NaN 1 ref / 1 cand")));
  const Tensor c = test::float_tensor("y", {1, 2}, {1.0f, 2.0f});
  auto against_number = gate_from(R"({"gates": [{"decoder": "tensor", "atol": 1e-3, "rtol": 1e-3}]})", io);
  ASSERT_TRUE(against_number->add("nan", {{"y", &a}}, {{"y", &c}}).ok());
  EXPECT_FALSE(against_number->finish().passed);  // NaN against a number never passes
}

TEST(GateRules, BoxesGateFlagsALossConcentratedInOneBand) {
  ModelIo io;
  io.outputs.push_back({"boxes", ElementType::kFloat, {1, -1, 4}, {"", "n", ""}, {}, {}});
  const std::string json = R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "bands": [0, 20],
      "min_recall": 0.5, "min_precision": 0.5}]})";
  // Five small boxes (10 px) and fifteen large ones (40 px); the candidate loses four small ones.
  std::vector<float> ref, cand;
  for (int i = 0; i < 20; ++i) {
    const float size = i < 5 ? 10.0f : 40.0f, x = static_cast<float>(i) * 50.0f;
    const std::vector<float> box{x, 0, x + size, size};
    ref.insert(ref.end(), box.begin(), box.end());
    if (i >= 4) cand.insert(cand.end(), box.begin(), box.end());
  }
  const Tensor a = test::float_tensor("boxes", {1, 20, 4}, ref), b = test::float_tensor("boxes", {1, 16, 4}, cand);
  auto gate = gate_from(json, io);
  ASSERT_TRUE(gate->add("img", {{"boxes", &a}}, {{"boxes", &b}}).ok());
  GateOutcome out = gate->finish();
  EXPECT_FALSE(out.passed);
  EXPECT_THAT(out.summary, HasSubstr("20 vs 16 detections, 4 decisions changed (4 lost, 0 gained); recall 80.0%"));
  EXPECT_THAT(out.details, ::testing::Contains(HasSubstr("loss concentrated in band [0, 20) px: 4 of the 4 losses (100.0%) against 25.0% of the boxes")));
  // Four losses spread in proportion (one small, three large): not concentrated, and 80% recall passes a 0.5 bound.
  cand.clear();
  for (int i = 0; i < 20; ++i) {
    if (i == 0 || i == 5 || i == 10 || i == 15) continue;
    const float size = i < 5 ? 10.0f : 40.0f, x = static_cast<float>(i) * 50.0f;
    cand.insert(cand.end(), {x, 0, x + size, size});
  }
  const Tensor spread = test::float_tensor("boxes", {1, 16, 4}, cand);
  auto again = gate_from(json, io);
  ASSERT_TRUE(again->add("img", {{"boxes", &a}}, {{"boxes", &spread}}).ok());
  out = again->finish();
  EXPECT_TRUE(out.passed) << out.summary;
}


// Each gate's decision at its boundary, on constructed numbers: one case per
// rule where the right arithmetic and a plausible wrong one give different verdicts.
ModelIo one_output(const std::string& name, std::vector<std::int64_t> shape) {
  ModelIo io;
  io.outputs.push_back({name, ElementType::kFloat, shape, std::vector<std::string>(shape.size()), {}, {}});
  return io;
}

GateOutcome feed(const std::string& json, const ModelIo& io, const Tensor& ref, const Tensor& cand) {
  auto gate = gate_from(json, io);
  const Status s = gate->add("in", {{ref.name, &ref}}, {{cand.name, &cand}});
  EXPECT_TRUE(s.ok()) << s.error().message;
  return gate->finish();
}

// Ten 10 px boxes, 20 px apart, from the left.
std::vector<float> row_of_boxes(int count, int first = 0) {
  std::vector<float> v;
  for (int i = first; i < first + count; ++i) v.insert(v.end(), {static_cast<float>(i) * 20.0f, 0, static_cast<float>(i) * 20.0f + 10, 10});
  return v;
}

TEST(GateRules, BoxesRecallIsOverTheReferencesBoxesAndPrecisionOverTheCandidates) {
  const ModelIo io = one_output("boxes", {1, -1, 4});
  const Tensor ten = test::float_tensor("boxes", {1, 10, 4}, row_of_boxes(10));
  // Eight of ten found, nothing gained: recall 0.8 (over the candidate's eight it would read 1.0).
  const Tensor eight = test::float_tensor("boxes", {1, 8, 4}, row_of_boxes(8));
  const GateOutcome lost = feed(R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "min_recall": 0.9, "min_precision": 0}]})", io, ten, eight);
  EXPECT_FALSE(lost.passed) << lost.summary;
  EXPECT_THAT(lost.summary, HasSubstr("recall 80.0%"));
  // All ten found and two gained: precision 10/12 (over the reference's ten it would read 1.0).
  auto twelve_boxes = row_of_boxes(10);
  const auto extra = row_of_boxes(2, 20);
  twelve_boxes.insert(twelve_boxes.end(), extra.begin(), extra.end());
  const Tensor twelve = test::float_tensor("boxes", {1, 12, 4}, twelve_boxes);
  const GateOutcome gained = feed(R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "min_recall": 0, "min_precision": 0.9}]})", io, ten, twelve);
  EXPECT_FALSE(gained.passed) << gained.summary;
  EXPECT_THAT(gained.summary, HasSubstr("precision 83.3%"));
  // The same two gained within the bounds pass: the precision bound is what failed it.
  EXPECT_TRUE(feed(R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "min_recall": 0, "min_precision": 0.8}]})", io, ten, twelve).passed);
}

TEST(GateRules, ABoxOnABandEdgeBelongsToTheBandAboveIt) {
  const ModelIo io = one_output("boxes", {1, -1, 4});
  const Tensor box = test::float_tensor("boxes", {1, 1, 4}, {0, 0, 20, 20});  // short side exactly 20
  const GateOutcome out = feed(R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "bands": [0, 20]}]})", io, box, box);
  EXPECT_THAT(out.details, ::testing::Contains(HasSubstr("band [20, inf) px: 1 vs 1 boxes")));
  EXPECT_THAT(out.details, ::testing::Contains(HasSubstr("band [0, 20) px: 0 vs 0 boxes")));
}

TEST(GateRules, ALossShareAboveTheBoxShareButUnderTwiceItIsNotConcentrated) {
  // Ten small boxes (half the boxes) and ten large; four small and one large lost: 80% of the
  // losses in a band holding 50% of the boxes. Over half the losses, but not over twice its share.
  const ModelIo io = one_output("boxes", {1, -1, 4});
  std::vector<float> ref, cand;
  for (int i = 0; i < 20; ++i) {
    const float size = i < 10 ? 10.0f : 40.0f, x = static_cast<float>(i) * 50.0f;
    ref.insert(ref.end(), {x, 0, x + size, size});
    if (i >= 4 && i != 10) cand.insert(cand.end(), {x, 0, x + size, size});
  }
  const Tensor a = test::float_tensor("boxes", {1, 20, 4}, ref), b = test::float_tensor("boxes", {1, 15, 4}, cand);
  const GateOutcome out = feed(R"({"gates": [{"decoder": "boxes", "boxes": "boxes", "bands": [0, 20],
      "min_recall": 0.5, "min_precision": 0.5}]})", io, a, b);
  EXPECT_TRUE(out.passed) << out.summary;
  EXPECT_THAT(out.details, ::testing::Not(::testing::Contains(HasSubstr("concentrated"))));
}

TEST(Matching, APairExactlyAtTheIouBoundMatches) {
  const Quad a = axis_aligned_quad(0, 0, 2, 1), b = axis_aligned_quad(0, 0, 1, 1);
  const double iou = quad_iou(a, b);
  EXPECT_NEAR(iou, 0.5, 1e-12);
  const BoxMatch m = match_by_iou({a}, {b}, iou);  // the bound is the pair's own IoU
  EXPECT_EQ(m.matched.size(), 1u);
  EXPECT_TRUE(m.ref_only.empty());
}

TEST(GateRules, TopKAgreementIsASetNotAnOrder) {
  const ModelIo io = one_output("y", {1, 4});
  const Tensor a = test::float_tensor("y", {1, 4}, {0.5f, 0.3f, 0.2f, 0.0f});
  const Tensor b = test::float_tensor("y", {1, 4}, {0.5f, 0.2f, 0.3f, 0.0f});  // second and third swap places
  const GateOutcome out = feed(R"({"gates": [{"decoder": "classification", "output": "y", "activation": "none", "top_k": 3}]})", io, a, b);
  EXPECT_TRUE(out.passed) << out.summary;
}

TEST(GateRules, AClassExactlyAtTheThresholdIsAboveItOnBothSides) {
  const ModelIo io = one_output("y", {1, 2});
  const Tensor a = test::float_tensor("y", {1, 2}, {0.5f, 0.25f});
  const GateOutcome out = feed(R"({"gates": [{"decoder": "classification", "output": "y", "activation": "none", "top_k": 1,
      "threshold": 0.5}]})", io, a, a);
  EXPECT_TRUE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("at threshold 0.5: 1 vs 1 above"));
}

TEST(GateRules, AClassThatRisesAboveTheThresholdIsAFlipToo) {
  const ModelIo io = one_output("y", {1, 2});
  const Tensor a = test::float_tensor("y", {1, 2}, {0.4f, 0.25f}), b = test::float_tensor("y", {1, 2}, {0.6f, 0.25f});
  const GateOutcome out = feed(R"({"gates": [{"decoder": "classification", "output": "y", "activation": "none", "top_k": 1,
      "threshold": 0.5}]})", io, a, b);
  EXPECT_FALSE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("1 decision changed (0 lost, 1 gained)"));
}

TEST(GateRules, AGainedClassAloneFailsAGateThatSawDecisions) {
  // Item 0 is above the threshold on both sides (the gate is not vacuous); item 1's class 0
  // rises above it on the candidate: one flip, gained, and nothing else differs.
  const ModelIo io = one_output("y", {2, 2});
  const Tensor a = test::float_tensor("y", {2, 2}, {0.7f, 0.1f, 0.4f, 0.25f});
  const Tensor same = test::float_tensor("y", {2, 2}, {0.7f, 0.1f, 0.45f, 0.25f});
  const Tensor rose = test::float_tensor("y", {2, 2}, {0.7f, 0.1f, 0.6f, 0.25f});
  const std::string gate = R"({"gates": [{"decoder": "classification", "output": "y", "activation": "none", "top_k": 1,
      "threshold": 0.5}]})";
  EXPECT_TRUE(feed(gate, io, a, same).passed);
  const GateOutcome out = feed(gate, io, a, rose);
  EXPECT_FALSE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("1 decision changed (0 lost, 1 gained)"));
}

TEST(GateRules, ASoftmaxSlotsNoObjectClassIsNeverADetection) {
  // One slot whose no-object class (the last) takes almost all the mass.
  const ModelIo io = one_output("logits", {1, 1, 3});
  const Tensor a = test::float_tensor("logits", {1, 1, 3}, {0.0f, 0.0f, 8.0f});
  const GateOutcome out = feed(R"({"gates": [{"decoder": "slots", "output": "logits", "activation": "softmax", "threshold": 0.5}]})", io, a, a);
  EXPECT_THAT(out.summary, HasSubstr("0 vs 0 detections in 1 slots"));
  // The reference decided nothing on its only input: the gate learned nothing, and says so.
  EXPECT_FALSE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("vacuous: the reference decided nothing on 1 of 1 inputs"));
}

TEST(Scores, CosineIgnoresEachSidesLength) {
  EXPECT_NEAR(cosine_similarity(std::vector<double>{3, 0}, std::vector<double>{1, 0}), 1.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(std::vector<double>{1, 0}, std::vector<double>{3, 0}), 1.0, 1e-12);
  EXPECT_NEAR(cosine_similarity(std::vector<double>{1, 1}, std::vector<double>{2, 0}), std::sqrt(0.5), 1e-12);
}

TEST(GateRules, AnEmbeddingWithNanFailsAndOneExactlyAtTheBoundPasses) {
  const ModelIo io = one_output("e", {1, 2});
  const Tensor a = test::float_tensor("e", {1, 2}, {1.0f, 0.0f});
  const Tensor nan = test::float_tensor("e", {1, 2}, {NAN, 0.0f});
  const std::string json = R"({"gates": [{"decoder": "embedding", "output": "e", "cosine": 1, "min_fraction": 1}]})";
  EXPECT_FALSE(feed(json, io, a, nan).passed);
  const GateOutcome same = feed(json, io, a, a);  // cosine exactly 1, the bound
  EXPECT_TRUE(same.passed) << same.summary;
}

TEST(GateRules, AMaskExactlyAtItsIouBoundPasses) {
  const ModelIo io = one_output("m", {1, 2, 2});
  const Tensor a = test::float_tensor("m", {1, 2, 2}, {1, 1, 0, 0}), b = test::float_tensor("m", {1, 2, 2}, {1, 0, 0, 0});  // IoU 0.5
  EXPECT_TRUE(feed(R"({"gates": [{"decoder": "mask", "output": "m", "min_iou": 0.5}]})", io, a, b).passed);
  EXPECT_FALSE(feed(R"({"gates": [{"decoder": "mask", "output": "m", "min_iou": 0.51}]})", io, a, b).passed);
}

TEST(GateRules, TheTensorGateRoundsTheInputsNeededUp) {
  // 9 of 10 inputs pass; a pass rate of 0.95 needs 9.5 of them, so 10.
  const ModelIo io = one_output("y", {1, 1});
  auto gate = gate_from(R"({"gates": [{"decoder": "tensor", "atol": 0, "rtol": 0, "pass_rate": 0.95}]})", io);
  const Tensor a = test::float_tensor("y", {1, 1}, {1.0f}), b = test::float_tensor("y", {1, 1}, {2.0f});
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(gate->add("in" + std::to_string(i), {{"y", &a}}, {{"y", i == 0 ? &b : &a}}).ok());
  const GateOutcome out = gate->finish();
  EXPECT_FALSE(out.passed) << out.summary;
}

// Recogniser scores [1, lines, steps, classes] whose winners spell each line; the chosen class scores `confidence`.
Tensor spelled(const std::vector<std::vector<std::size_t>>& lines, std::size_t classes, float confidence = 0.9f) {
  const std::size_t steps = lines.front().size();
  std::vector<float> v(lines.size() * steps * classes, 0.0f);
  for (std::size_t l = 0; l < lines.size(); ++l) {
    for (std::size_t t = 0; t < steps; ++t) v[(l * steps + t) * classes + lines[l][t]] = confidence;
  }
  return test::float_tensor("y", {static_cast<std::int64_t>(lines.size()), static_cast<std::int64_t>(steps), static_cast<std::int64_t>(classes)}, v);
}

class TextGateRules : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-text-gate");
    test::write_text(dir_ / "keys.txt", "a\n\xc3\xa9\n");  // blank, a, é, space
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string gate(const std::string& bounds) const {
    return R"({"gates": [{"decoder": "text", "output": "y", "characters": ")" + (dir_ / "keys.txt").string() + "\"" + bounds + "}]}";
  }
  fs::path dir_;
};

TEST_F(TextGateRules, TheCharacterErrorRateCountsCharactersNotBytes) {
  // "éé" against "é": one edit in two characters (four bytes) is 50%, over a 30% bound.
  const ModelIo io = one_output("y", {1, 3, 4});
  const GateOutcome out = feed(gate(R"(, "min_exact": 0, "max_cer": 0.3)"), io, spelled({{2, 0, 2}}, 4), spelled({{2, 0, 0}}, 4));
  EXPECT_FALSE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("CER 50.000% (1 edits in 2 characters"));
}

TEST_F(TextGateRules, OneLineOfTwoChangedFailsAnExactBoundOfAll) {
  const ModelIo io = one_output("y", {2, 2, 4});
  const GateOutcome out = feed(gate(R"(, "min_exact": 1, "max_cer": 1)"), io, spelled({{1, 0}, {2, 0}}, 4), spelled({{1, 0}, {1, 0}}, 4));
  EXPECT_FALSE(out.passed) << out.summary;
}

TEST_F(TextGateRules, ALineExactlyAtTheDropScoreIsKept) {
  // The reference's line scores exactly the drop score, the candidate's more: both kept, nothing changed.
  const ModelIo io = one_output("y", {1, 2, 4});
  const GateOutcome out = feed(gate(R"(, "drop_score": 0.5)"), io, spelled({{1, 0}}, 4, 0.5f), spelled({{1, 0}}, 4, 0.75f));
  EXPECT_TRUE(out.passed) << out.summary;
  EXPECT_THAT(out.summary, HasSubstr("1 vs 1 lines kept"));
}

TEST(Ctc, ABlankSeparatesTwoRunsOfOneSymbolAndTheScoreIsOverKeptSymbols) {
  const auto chars = CharacterList::from_symbols({"a"}, false);  // blank, a
  // a blank a blank blank: "aa", each a at 0.9, the blanks' scores no part of the line's.
  const std::vector<float> scores{0.0f, 0.9f, 0.6f, 0.1f, 0.0f, 0.9f, 0.6f, 0.1f, 0.6f, 0.1f};
  const TextLine line = ctc_greedy_decode(scores, 5, chars);
  EXPECT_EQ(line.text, "aa");
  EXPECT_NEAR(line.score, 0.9, 1e-6);
}

}  // namespace
}  // namespace rung
