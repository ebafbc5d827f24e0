// The OCR pipeline (rung/pipeline.h) on real pages: rendered prose with its
// truth (tools/make-text-corpus.py), skimage's scanned page upright and turned
// half a turn, a corrupt file among good ones, and a run cancelled midway. The
// engine is real (ONNX Runtime 1.30.0, the PP-OCR models), settled on the CPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "pipeline/ocr_steps.h"
#include "pipeline/queue.h"
#include "rung/cpus.h"
#include "rung/pipeline.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const fs::path kPage = "/usr/lib/python3/dist-packages/skimage/data/page.png";

std::vector<std::string> page_truth() {
  auto t = read_truth_lines(test::fixtures_dir() / "ocr" / "page.truth.json");
  EXPECT_TRUE(t.ok()) << t.error().message;
  return t.ok() ? *t : std::vector<std::string>{};
}

std::vector<std::string> texts(const OcrPage& p) {
  std::vector<std::string> out;
  for (const auto& l : p.lines) out.push_back(l.text);
  return out;
}

std::size_t threads_of_this_process() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

class PipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-pipeline");
    const fs::path models = test::model_path("ppocr");
    core::EngineOptions o;
    o.cache_dir = dir_ / "cache";
    o.models = {{"ppocr_det_v4", Role::kDetector, models / "ch_PP-OCRv4_det_infer.onnx", {}, {}, {}},
                {"ppocr_rec_v4", Role::kGeneric, models / "ch_PP-OCRv4_rec_infer.onnx", {}, {}, {}},
                {"ppocr_cls", Role::kGeneric, models / "ch_ppocr_mobile_v2.0_cls_infer.onnx", {}, {}, {}}};
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.worker = test::worker_path();
    o.probe_runs = 1;
    auto e = core::Engine::start(std::move(o));
    ASSERT_TRUE(e.ok()) << e.error().message;
    engine_ = *e;
    engine_->wait_until_settled();  // no background thread comes or goes while threads are counted
    auto j = engine_->open_job();
    ASSERT_TRUE(j.ok()) << j.error().message;
    job_ = std::move(*j);
    auto c = CharacterList::from_file(models / "ppocr_keys_v1.txt");
    ASSERT_TRUE(c.ok()) << c.error().message;
    chars_ = std::make_unique<CharacterList>(std::move(*c));
  }
  static void TearDownTestSuite() {
    job_.reset();
    engine_.reset();
    fs::remove_all(dir_);
  }

  // Runs the pipeline, collecting every page written.
  static std::vector<OcrPage> read(const std::vector<fs::path>& images, PipelineOptions o = {}, std::stop_token stop = {},
                                   PipelineReport* report = nullptr) {
    std::vector<OcrPage> pages;
    auto on_page = o.on_page;
    o.on_page = [&](const OcrPage& p) {
      pages.push_back(p);
      if (on_page) on_page(p);
    };
    auto r = run_ocr_pipeline(*job_, *chars_, images, o, stop);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (r.ok() && report != nullptr) *report = *r;
    return pages;
  }

  // The page's first line alone: a page that costs a fifth of the whole, for the tests of the machinery.
  static fs::path one_line() {
    const fs::path out = dir_ / "line" / "line.png";
    if (!fs::exists(out)) {
      fs::create_directories(out.parent_path());
      auto image = read_image(kPage);
      EXPECT_TRUE(image.ok());
      EXPECT_TRUE(write_png(crop_quad(*image, axis_aligned_quad(0, 0, image->width, 48)), out).ok());
    }
    return out;
  }

  static fs::path turned_page() {
    const fs::path out = dir_ / "turned" / "page-turned.png";
    if (!fs::exists(out)) {
      fs::create_directories(out.parent_path());
      auto image = read_image(kPage);
      EXPECT_TRUE(image.ok());
      EXPECT_TRUE(write_png(rotate_180(*image), out).ok());
    }
    return out;
  }

  static inline fs::path dir_;
  static inline std::shared_ptr<core::Engine> engine_;
  static inline std::unique_ptr<core::Job> job_;
  static inline std::unique_ptr<CharacterList> chars_;
};

TEST_F(PipelineTest, ReadsEverySevenLinesOfTheScannedPageInReadingOrder) {
  PipelineReport report;
  const auto pages = read({kPage}, {}, {}, &report);
  ASSERT_EQ(pages.size(), 1u);
  ASSERT_TRUE(pages[0].ok()) << pages[0].error;
  const TextScore s = score_lines(texts(pages[0]), page_truth());
  EXPECT_EQ(s.found_lines, 7u) << ::testing::PrintToString(texts(pages[0]));
  // The scan's three middle lines curve, so their rectangles take in their neighbours' edges and lose spaces.
  EXPECT_LE(s.cer(), 0.12) << ::testing::PrintToString(texts(pages[0]));
  ASSERT_EQ(pages[0].lines.size(), 7u);
  EXPECT_EQ(pages[0].lines[0].text, "Region-based segmentation");
  EXPECT_EQ(pages[0].lines[5].text, "histogram of grey values:");
  for (const auto& l : pages[0].lines) EXPECT_FALSE(l.turned);
  EXPECT_EQ(report.model_ids.at("ppocr_cls"), "ppocr_cls");
  EXPECT_EQ(report.pages, 1u);
}

TEST_F(PipelineTest, APageTurnedUpsideDownReadsTheSameLinesInTheSameOrder) {
  const auto turned = read({turned_page()});
  ASSERT_EQ(turned.size(), 1u);
  ASSERT_TRUE(turned[0].ok()) << turned[0].error;
  const TextScore s = score_lines(texts(turned[0]), page_truth());
  EXPECT_EQ(s.found_lines, 7u) << ::testing::PrintToString(texts(turned[0]));
  EXPECT_LE(s.cer(), 0.12) << ::testing::PrintToString(texts(turned[0]));
  ASSERT_EQ(turned[0].lines.size(), 7u);
  EXPECT_EQ(turned[0].lines[0].text, "Region-based segmentation");
  EXPECT_EQ(turned[0].lines[5].text, "histogram of grey values:");
  for (const auto& l : turned[0].lines) EXPECT_TRUE(l.turned);
  // The first line's box starts at its own top-left: the image's bottom right.
  EXPECT_GT(turned[0].lines[0].box[0].y, turned[0].lines[0].box[2].y);
  // Without the classifier the same page reads as nothing like its text.
  PipelineOptions bare;
  bare.classifier.clear();
  const auto unturned = read({turned_page()}, bare);
  ASSERT_EQ(unturned.size(), 1u);
  EXPECT_LT(score_lines(texts(unturned[0]), page_truth()).found_lines, 2u);
}

TEST_F(PipelineTest, RenderedPagesReadAgainstTheirTruth) {
  // Four pages of the corpus (one turned, dense ones among them), rendered here.
  const fs::path corpus = dir_ / "corpus";
  auto gen = test::run_command("python3 '" + (test::fixtures_dir().parent_path().parent_path() / "tools" / "make-text-corpus.py").string() +
                               "' --out '" + corpus.string() + "' --set pipeline-test --pages 4 --rotated 0.3 --dense 0.3");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  std::ifstream in(corpus / "pipeline-test" / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  std::vector<fs::path> images;
  bool rotated = false, dense = false;
  for (const auto& p : manifest["pages"]) {
    images.push_back(corpus / "pipeline-test" / p["image"].get<std::string>());
    rotated = rotated || p["rotation"] == 180;
    dense = dense || p["dense"].get<bool>();
  }
  ASSERT_TRUE(rotated && dense) << "the set should hold a turned page and a dense one";
  TextScore total;
  for (const auto& page : read(images)) {
    ASSERT_TRUE(page.ok()) << page.error;
    fs::path truth = page.file;
    auto lines = read_truth_lines(truth.replace_extension(".json"));
    ASSERT_TRUE(lines.ok()) << lines.error().message;
    const TextScore s = score_lines(texts(page), *lines);
    EXPECT_EQ(s.found_lines, s.truth_lines) << page.file << ": " << ::testing::PrintToString(texts(page));
    total += s;
  }
  EXPECT_EQ(total.found_lines, total.truth_lines);
  // These four are harder than the corpus at large (a dense monospaced page among them): 2.7% when written.
  EXPECT_LE(total.cer(), 0.04);
}

TEST_F(PipelineTest, ACorruptImageIsReportedForItselfAndTheRestAreRead) {
  const fs::path bad = dir_ / "corrupt.png";
  { std::ofstream(bad) << "\x89PNG\r\n\x1a\n but not really"; }
  PipelineReport report;
  const auto pages = read({one_line(), bad, one_line(), dir_ / "missing.png", one_line()}, {}, {}, &report);
  ASSERT_EQ(pages.size(), 5u);
  for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(pages[i].index, i);  // written in the order given
  EXPECT_TRUE(pages[0].ok());
  EXPECT_THAT(pages[1].error, HasSubstr("corrupt.png"));
  EXPECT_THAT(pages[1].error, HasSubstr("does not decode"));
  EXPECT_TRUE(pages[1].lines.empty());
  EXPECT_TRUE(pages[2].ok());
  EXPECT_THAT(pages[3].error, HasSubstr("missing.png"));
  EXPECT_EQ(texts(pages[4]), texts(pages[0]));
  EXPECT_EQ(report.pages, 5u);
  EXPECT_EQ(report.failed, 2u);
  EXPECT_FALSE(report.cancelled);
}

TEST_F(PipelineTest, TheSequentialLoopReadsWhatThePipelineReads) {
  PipelineOptions seq;
  seq.sequential = true;
  PipelineReport report;
  const auto a = read({one_line(), turned_page()}, seq, {}, &report);
  const auto b = read({one_line(), turned_page()});
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(texts(a[0]), texts(b[0]));
  EXPECT_EQ(texts(a[1]), texts(b[1]));
  EXPECT_TRUE(report.sequential);
  std::vector<std::string> names;
  for (const auto& s : report.stages) names.push_back(s.name);
  EXPECT_THAT(names, ElementsAre("decode", "detect", "crop", "classify", "recognise", "write"));
}

// The C++ API has no CLI in front: what would start 100000 threads, or batch without bound, is refused before any thread starts.
TEST_F(PipelineTest, OptionsOutOfRangeAreRefusedBeforeAnyThreadStarts) {
  const int cpus = usable_cpus();
  const std::vector<std::pair<std::function<void(PipelineOptions&)>, std::string>> cases = {
      {[&](PipelineOptions& o) { o.decode_threads = 100000; }, "decode threads 100000 is out of range"},
      {[&](PipelineOptions& o) { o.decode_threads = cpus + 1; }, "decode threads " + std::to_string(cpus + 1) + " is out of range"},
      {[&](PipelineOptions& o) { o.decode_threads = -1; }, "decode threads -1 is out of range"},
      {[&](PipelineOptions& o) { o.recognise_threads = cpus + 1; }, "recognise threads " + std::to_string(cpus + 1) + " is out of range"},
      {[&](PipelineOptions& o) { o.recognise_batch = kMaxOcrBatch + 1; }, "a recognise batch of 257 is out of range"},
      {[&](PipelineOptions& o) { o.classify_batch = 0; }, "a classify batch of 0 is out of range"},
      {[&](PipelineOptions& o) { o.classify_batch = kMaxOcrBatch + 1; }, "a classify batch of 257 is out of range"},
      {[&](PipelineOptions& o) { o.queue_depth = 0; }, "a queue depth of 0 is out of range"},
      {[&](PipelineOptions& o) { o.boxes.unclip_ratio = std::numeric_limits<double>::quiet_NaN(); }, "an unclip ratio of nan is out of range"},
      {[&](PipelineOptions& o) { o.boxes.unclip_ratio = 0; }, "an unclip ratio of 0 is out of range"},
      {[&](PipelineOptions& o) { o.boxes.unclip_ratio = kMaxUnclipRatio * 2; }, "an unclip ratio of 20 is out of range"},
      {[&](PipelineOptions& o) { o.turn_threshold = 1.5; }, "a turn threshold of 1.5 is out of range"},
      {[&](PipelineOptions& o) { o.drop_score = -0.1; }, "a drop score of -0.1 is out of range"},
  };
  const std::size_t threads_before = threads_of_this_process();
  for (const auto& [change, said] : cases) {
    PipelineOptions o;
    change(o);
    bool written = false;
    o.on_page = [&](const OcrPage&) { written = true; };
    auto r = run_ocr_pipeline(*job_, *chars_, {one_line()}, o);
    ASSERT_FALSE(r.ok()) << said;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << said;
    EXPECT_THAT(r.error().message, HasSubstr(said));
    EXPECT_FALSE(written) << said;
  }
  // No thread was started (one left over from earlier work may have ended meanwhile).
  EXPECT_LE(threads_of_this_process(), threads_before);
  // Each bound itself is taken.
  PipelineOptions edge;
  edge.decode_threads = cpus;
  edge.recognise_threads = cpus;
  edge.classify_batch = kMaxOcrBatch;
  edge.queue_depth = 1;
  edge.boxes.unclip_ratio = 2.0;
  EXPECT_EQ(read({one_line()}, edge).size(), 1u);
}

TEST_F(PipelineTest, EveryStageIsAccountedFor) {
  PipelineOptions o;
  o.decode_threads = 2;
  o.recognise_threads = 2;
  PipelineReport r;
  read({one_line(), one_line(), one_line()}, o, {}, &r);
  ASSERT_EQ(r.stages.size(), 6u);
  for (const auto& s : r.stages) {
    EXPECT_EQ(s.items, 3u) << s.name;
    EXPECT_GE(s.busy_s, 0) << s.name;
    EXPECT_LE(s.utilisation, 1.0 + 1e-9) << s.name;
  }
  EXPECT_EQ(r.stages[0].threads, 2);
  EXPECT_EQ(r.stages[4].threads, 2);
  EXPECT_GT(r.bottleneck_utilisation, 0);
  EXPECT_FALSE(r.bottleneck.empty());
  const auto j = nlohmann::json::parse(r.json());
  EXPECT_EQ(j["pages"], 3);
  EXPECT_EQ(j["stages"].size(), 6u);
  EXPECT_THAT(r.table(), HasSubstr("bottleneck " + r.bottleneck));
}

TEST_F(PipelineTest, CancellingMidRunStopsEarlyAndLeavesNoThreadBehind) {
  read({one_line()});  // the sessions are open before threads are counted
  const std::size_t before = threads_of_this_process();
  std::stop_source stop;
  PipelineOptions o;
  o.on_page = [&](const OcrPage& p) {
    if (p.index == 1) stop.request_stop();
  };
  PipelineReport r;
  const auto pages = read(std::vector<fs::path>(40, one_line()), o, stop.get_token(), &r);
  EXPECT_TRUE(r.cancelled);
  EXPECT_GE(pages.size(), 2u);
  EXPECT_LT(pages.size(), 40u);
  EXPECT_EQ(threads_of_this_process(), before);
}

TEST_F(PipelineTest, AModelTheJobDoesNotKnowStopsTheRunBeforeItStarts) {
  PipelineOptions o;
  o.classifier = "no_such_model";
  auto r = run_ocr_pipeline(*job_, *chars_, {kPage}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("no_such_model"));
}

// ---- The parts, one rule at a time ----

TEST(ReadingOrder, TopToBottomAndWithinTenPixelsLeftToRight) {
  const std::vector<Quad> boxes{axis_aligned_quad(200, 52, 300, 70), axis_aligned_quad(10, 10, 100, 30), axis_aligned_quad(10, 50, 100, 70),
                                axis_aligned_quad(120, 59, 180, 75), axis_aligned_quad(10, 69, 100, 80)};
  // Box 3's top is 9 px below box 2's and 7 px below box 0's: one line with them; box 4's is 10 px below box 3's: the next.
  EXPECT_THAT(reading_order(boxes), ElementsAre(1u, 2u, 3u, 0u, 4u));
}

TEST(WidthBatches, SimilarWidthsShareARunAndAWideCropRunsAlone) {
  const auto crop = [](int w) { return Image{w, 48, 3, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * 48 * 3, 255)}; };
  // 100 and 300 px both run at the recogniser's narrowest, 320; 390 is within a quarter of it, 401 is not.
  const std::vector<Image> crops{crop(390), crop(100), crop(401), crop(300), crop(2000)};
  EXPECT_THAT(width_batches(crops, 6, 0.25), ElementsAre(ElementsAre(1u, 3u, 0u), ElementsAre(2u), ElementsAre(4u)));
  EXPECT_THAT(width_batches(crops, 2, 0.25), ElementsAre(ElementsAre(1u, 3u), ElementsAre(0u, 2u), ElementsAre(4u)));
}

TEST(TruthScore, LinesMatchInAnyOrderAndMissesCountInFull) {
  const std::vector<std::string> truth{"the first line", "a second one", "third"};
  TextScore s = score_lines({"a second one", "the frst line"}, truth);
  EXPECT_EQ(s.truth_lines, 3u);
  EXPECT_EQ(s.found_lines, 2u);
  EXPECT_EQ(s.truth_chars, 14u + 12u + 5u);
  EXPECT_EQ(s.edits, 1u + 5u);  // one deletion, and "third" missed
  // A line read that is not there costs its length; a line a quarter wrong still counts as found, more does not.
  s = score_lines({"abcd", "noise"}, {"abce"});
  EXPECT_EQ(s.found_lines, 1u);
  EXPECT_EQ(s.edits, 1u + 5u);
  EXPECT_EQ(score_lines({"abxx"}, {"abcd"}).found_lines, 0u);
  EXPECT_EQ(score_lines({"a b"}, {"ab"}).edits, 1u);  // spaces count
  EXPECT_EQ(score_lines({"a\xEF\xBC\x8C b\xEF\xBC\x88" "c\xEF\xBC\x89\xE3\x80\x80"}, {"a, b(c) "}).edits, 0u);  // "a， b（c）　"
}

TEST(TruthScore, ATruthFileWithoutLinesIsAClearError) {
  const fs::path dir = test::make_temp_dir("rung-truth");
  { std::ofstream(dir / "t.json") << R"({"text": "no lines here"})"; }
  auto r = read_truth_lines(dir / "t.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("t.json"));
  EXPECT_THAT(r.error().message, HasSubstr("lacks 'lines'"));
  fs::remove_all(dir);
}

TEST(TruthScore, ADamagedTruthFileIsAnInputErrorAndAMissingOneIsNotFound) {
  const fs::path dir = test::make_temp_dir("rung-truth");
  auto missing = read_truth_lines(dir / "none.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {"[1, 2]", "must be a JSON object"},
      {R"({"lines": "a"})", "'lines' must be a list"},
      {R"({"lines": [{"text": null}]})", "lines[0]: 'text' must be a string"},
      {R"({"lines": [{"box": [1, 2]}]})", "lines[0]: lacks 'text'"},
      {R"({"lines": [)", "not valid JSON"},
  };
  for (const auto& [text, said] : damaged) {
    { std::ofstream(dir / "t.json") << text; }
    auto r = read_truth_lines(dir / "t.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_THAT(r.error().message, HasSubstr((dir / "t.json").string())) << text;
    EXPECT_THAT(r.error().message, HasSubstr(said)) << text;
  }
  fs::remove(dir / "t.json");
  fs::create_symlink(dir / "t.json", dir / "t.json");
  auto loop = read_truth_lines(dir / "t.json");
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.error().code, ErrorCode::kInvalidArgument);
  fs::remove_all(dir);
}

TEST(BoundedQueue, AFullQueueHoldsTheProducerAndCancellingReleasesIt) {
  BoundedQueue<int> q(2);
  ASSERT_TRUE(q.push(1));
  ASSERT_TRUE(q.push(2));
  std::atomic<int> pushed{0};
  std::jthread producer([&] {
    pushed = q.push(3) ? 1 : -1;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pushed.load(), 0);  // held: the queue is full
  EXPECT_EQ(q.pop(), 1);
  producer.join();
  EXPECT_EQ(pushed.load(), 1);
  q.close();
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), 3);
  EXPECT_EQ(q.pop(), std::nullopt);  // closed and drained
  BoundedQueue<int> full(1);
  ASSERT_TRUE(full.push(1));
  std::jthread held([&] { pushed = full.push(2) ? 1 : -1; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  full.cancel();
  held.join();
  EXPECT_EQ(pushed.load(), -1);
  EXPECT_EQ(full.pop(), std::nullopt);
}

}  // namespace
}  // namespace rung
