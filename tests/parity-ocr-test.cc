// `rung parity` on the real PP-OCRv4 models and real text images (Debian's
// python3-skimage ships a scanned page and a printed paragraph): the detector's
// boxes per size band across two ONNX Runtime builds, and the recogniser on the
// text lines those boxes cut out, through the text gate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "parity/gate_file.h"
#include "parity_test_support.h"
#include "rung/decode.h"
#include "rung/image.h"
#include "session/session.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

fs::path library_of(const std::string& version) {
  for (const auto& e : fs::directory_iterator(test::runtime_dir(version))) {
    if (e.path().filename().string().starts_with("libonnxruntime.so")) return e.path();
  }
  return {};
}

fs::path det_model() { return test::model_path("ppocr/ch_PP-OCRv4_det_infer.onnx"); }
fs::path rec_model() { return test::model_path("ppocr/ch_PP-OCRv4_rec_infer.onnx"); }
fs::path keys() { return test::model_path("ppocr/ppocr_keys_v1.txt"); }

// PaddleOCR's recogniser input: BGR, height 48, at least 320 wide, (x / 255 - 0.5) / 0.5, padded with 0.
constexpr const char* kRecPreprocess =
    R"({"fit": "height", "height": 48, "width": 320, "pad": 127.5, "channels": "BGR", "mean": [0.5], "std": [0.5]})";

class ParityOcrTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-parity-ocr");
    fs::create_directories(dir_ / "images");
    for (const char* name : {"page.png", "bw_text.png", "text.png"}) {
      const fs::path src = test::skimage_image(name);
      if (fs::exists(src)) fs::copy_file(src, dir_ / "images" / name);
    }
    test::write_text(dir_ / "rec.gate.json", nlohmann::json{{"model", "PP-OCRv4 recogniser"},
                                                             {"preprocess", nlohmann::json::parse(kRecPreprocess)},
                                                             {"gates", {{{"decoder", "text"}, {"output", "softmax_11.tmp_0"},
                                                                         {"characters", keys().string()}, {"drop_score", 0.5}}}}}
                                                 .dump(2));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static OrtProcess& process() {
    static OrtProcess* p = [] {
      auto build = load_runtime_build(library_of("1.30.0"));
      EXPECT_TRUE(build.ok()) << build.error().message;
      auto installed = OrtProcess::install(*build);
      EXPECT_TRUE(installed.ok()) << installed.error().message;
      return *installed;
    }();
    return *p;
  }

  // The text lines the detector finds in the page and the paragraph, cut out
  // in this process with the decoders an OCR application uses (once per process).
  static const std::vector<fs::path>& crops() {
    static const std::vector<fs::path> made = [] {
      std::vector<fs::path> out;
      fs::create_directories(dir_ / "crops");
      SessionSettings cpu;
      cpu.rung = *find_rung("cpu");
      auto det = open_session(process(), det_model(), cpu);
      EXPECT_TRUE(det.ok()) << det.error().message;
      auto gate = read_gate_file(test::fixtures_dir() / "parity" / "ppocr_det.gate.json");
      EXPECT_TRUE(gate.ok()) << gate.error().message;
      if (!det.ok() || !gate.ok()) return out;
      const std::string input = describe_session(*det).inputs[0].name;
      for (const char* name : {"page.png", "bw_text.png"}) {
        auto image = read_image(dir_ / "images" / name);
        EXPECT_TRUE(image.ok()) << image.error().message;
        if (!image.ok()) continue;
        ImageGeometry geometry;
        auto map = run_session(*det, {image_to_tensor(*image, *gate->preprocess, input, &geometry)});
        EXPECT_TRUE(map.ok()) << map.error().message;
        if (!map.ok()) continue;
        const Tensor& p = map->front();
        const auto h = static_cast<std::size_t>(p.shape[2]), w = static_cast<std::size_t>(p.shape[3]);
        for (const TextBox& box : extract_text_boxes(p.view<float>(), h, w)) {
          Quad q = box.quad;
          for (auto& pt : q) pt = geometry.to_source(pt);
          out.push_back(dir_ / "crops" / fmt::format("{}_{:02}.png", fs::path(name).stem().string(), out.size()));
          EXPECT_TRUE(write_png(crop_quad(*image, q), out.back()).ok());
        }
      }
      return out;
    }();
    return made;
  }

  static inline fs::path dir_;
};

TEST_F(ParityOcrTest, TheCropsAreRealTextLinesTheRecogniserReads) {
  ASSERT_GE(crops().size(), 10u);
  SessionSettings cpu;
  cpu.rung = *find_rung("cpu");
  auto rec = open_session(process(), rec_model(), cpu);
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  auto pre = ImagePreprocess::from_json_text(kRecPreprocess);
  ASSERT_TRUE(pre.ok()) << pre.error().message;
  auto chars = CharacterList::from_file(keys());
  ASSERT_TRUE(chars.ok()) << chars.error().message;
  std::string read;
  for (const auto& crop : crops()) {
    auto image = read_image(crop);
    ASSERT_TRUE(image.ok()) << image.error().message;
    auto scores = run_session(*rec, {image_to_tensor(*image, *pre, describe_session(*rec).inputs[0].name)});
    ASSERT_TRUE(scores.ok()) << scores.error().message;
    const Tensor& s = scores->front();
    read += ctc_greedy_decode(s.view<float>(), static_cast<std::size_t>(s.shape[1]), *chars).text + "\n";
  }
  // Words from the scanned page and from the printed paragraph: box extraction,
  // crop, preprocessing and CTC decoding all have to be right for these.
  for (const char* word : {"segmentation", "markers", "background", "noble", "sparkling", "creature"}) {
    EXPECT_THAT(read, HasSubstr(word)) << "the recogniser read:\n" << read;
  }
}

TEST_F(ParityOcrTest, DetectorAcrossTwoBuildsReportsRecallPerSizeBand) {
  auto r = test::parity("--ref " + test::side(det_model(), "1.30.0") + " --cand " + test::side(det_model(), "1.28.2") + " --inputs '" +
                        (dir_ / "images").string() + "' --gate '" + (test::fixtures_dir() / "parity" / "ppocr_det.gate.json").string() +
                        "' --out-json '" + (dir_ / "det.json").string() + "'");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ONNX Runtime 1.30.0"));
  EXPECT_THAT(r.out, HasSubstr("ONNX Runtime 1.28.2"));
  EXPECT_THAT(r.out, ContainsRegex("boxes · sigmoid_0.tmp_0 \\([0-9]+ inputs, [0-9]+ vacuous\\): [0-9]+ vs [0-9]+ detections, (no decisions changed|[0-9]+ decisions? changed \\()"));
  for (const char* band : {"\\[0, 16\\)", "\\[16, 32\\)", "\\[32, 64\\)", "\\[64, inf\\)"}) {
    EXPECT_THAT(r.out, ContainsRegex(std::string("band ") + band + " px: [0-9]+ vs [0-9]+ boxes, recall [-0-9.%]+ \\([0-9]+ lost\\)"));
  }
  const auto j = nlohmann::json::parse(test::read_text(dir_ / "det.json"));
  const auto& stats = j["gates"][0]["stats"];
  EXPECT_GE(stats["detections_ref"].get<int>(), 10);
  // Whatever the builds decide, every changed decision is named in the report.
  const int changed = stats["lost"].get<int>() + stats["gained"].get<int>();
  EXPECT_EQ(r.exit_code == 0, j["passed"].get<bool>());
  if (changed > 0) {
    EXPECT_THAT(r.out, ContainsRegex("(lost|gained) a [0-9]+ px box")) << r.out;
  }
}

TEST_F(ParityOcrTest, DetectorWithAPerturbedSigmoidFailsTheBoxesGate) {
  auto r = test::parity("--ref " + test::side(det_model()) + " --cand " + test::sim_ep_side(det_model(), ",option.ops=Sigmoid,option.perturb=0.2") +
                        " --inputs '" + (dir_ / "images").string() + "' --gate '" +
                        (test::fixtures_dir() / "parity" / "ppocr_det.gate.json").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, ContainsRegex("FAIL  boxes · sigmoid_0.tmp_0 \\([0-9]+ inputs, [0-9]+ vacuous\\): [0-9]+ vs [0-9]+ detections, [0-9]+ decisions? changed"));
}

TEST_F(ParityOcrTest, RecogniserOnRealCropsAcrossTwoBuildsAgreesOrNamesEachLine) {
  const std::size_t lines = crops().size();
  ASSERT_GE(lines, 10u);
  auto r = test::parity("--ref " + test::side(rec_model(), "1.30.0", ",threads=1") + " --cand " + test::side(rec_model(), "1.28.2", ",threads=1") + " --inputs '" +
                        (dir_ / "crops").string() + "' --gate '" + (dir_ / "rec.gate.json").string() + "' --out-json '" +
                        (dir_ / "rec.json").string() + "'");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err;
  EXPECT_THAT(r.out, ContainsRegex(fmt::format("text · softmax_11.tmp_0 \\({0} inputs, 0 vacuous\\): {0} vs {0} lines, [0-9]+ lines? changed", lines)));
  const auto j = nlohmann::json::parse(test::read_text(dir_ / "rec.json"));
  const auto& stats = j["gates"][0]["stats"];
  EXPECT_EQ(stats["lines"].get<std::size_t>(), lines);
  EXPECT_GT(stats["characters"].get<int>(), 100);
  // Passing means every line is the same string; failing means each differing line is listed by its crop.
  const auto differing = stats["differing"].size();
  EXPECT_EQ(r.exit_code == 0, differing == 0) << r.out;
  for (const auto& line : stats["differing"]) EXPECT_THAT(r.out, HasSubstr(line.get<std::string>()));
}

TEST_F(ParityOcrTest, RecogniserWithPerturbedAddsFailsTheTextGateNamingTheLines) {
  ASSERT_GE(crops().size(), 4u);
  fs::create_directories(dir_ / "few");
  for (std::size_t i = 0; i < 4; ++i) fs::copy_file(crops()[i], dir_ / "few" / crops()[i].filename(), fs::copy_options::overwrite_existing);
  auto r = test::parity("--ref " + test::side(rec_model(), "1.30.0", ",threads=1") + " --cand " +
                        test::sim_ep_side(rec_model(), ",threads=1,option.ops=Add,option.perturb=0.05") + " --inputs '" +
                        (dir_ / "few").string() + "' --gate '" + (dir_ / "rec.gate.json").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, ContainsRegex("FAIL  text · softmax_11.tmp_0 \\([0-9]+ inputs, [0-9]+ vacuous\\): [0-9]+ vs [0-9]+ lines, [1-9][0-9]* lines? changed"));
  EXPECT_THAT(r.out, ContainsRegex("(page|bw_text)_[0-9]+.png: \"[^\"]*\" vs \"[^\"]*\" \\([0-9]+ edits?\\)"));
}

}  // namespace
}  // namespace rung
