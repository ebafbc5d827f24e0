// The example application on a real scanned page (Debian's python3-skimage
// ships it): on the CPU floor, and on the simulated accelerator's compiled engines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rung/image.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kPage = "/usr/lib/python3/dist-packages/skimage/data/page.png";

class OcrExampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kPage)) << kPage << " is missing: tools/bootstrap.sh installs python3-skimage";
    dir_ = test::make_temp_dir("rung-ocr");
    fs::create_directories(dir_ / "images");
    fs::copy_file(kPage, dir_ / "images" / "page.png");
    test::make_plugin_dir(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  test::CommandResult ocr(const std::string& extra) {
    return test::run_command("env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG '" + (test::binary_dir() / "ocr-lines").string() + "' '" +
                             (dir_ / "images").string() + "' --models '" + (test::deps_dir() / "models" / "ppocr").string() +
                             "' --ort-dir '" + test::runtime_dir("1.30.0").string() + "' --cache-dir '" +
                             (dir_ / "cache").string() + "' " + extra);
  }

  fs::path dir_;
};

std::string lines_only(const std::string& out) { return out.substr(0, out.find("models:")); }

TEST_F(OcrExampleTest, ReadsTheScannedPageOnTheFloor) {
  auto r = ocr("--truth '" + (test::fixtures_dir() / "ocr").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("page.png\n"));
  EXPECT_THAT(r.out, HasSubstr("  Region-based segmentation  (0.9"));
  EXPECT_THAT(r.out, HasSubstr("histogram of grey values:"));
  EXPECT_THAT(r.out, HasSubstr("truth: 1 pages, 7 of 7 lines found (100.00%)"));
  EXPECT_THAT(r.out, HasSubstr("models: ppocr_cls=ppocr_cls on CPU, ppocr_det_v4=ppocr_det_v4 on CPU, ppocr_rec_v4=ppocr_rec_v4 on CPU\n"));
  // Where the time went, stage by stage.
  for (const char* stage : {"decode", "detect", "crop", "classify", "recognise", "write"}) EXPECT_THAT(r.out, HasSubstr(std::string("\n  ") + stage + " "));
  EXPECT_THAT(r.out, HasSubstr("1 pages (0 failed) in "));
  EXPECT_THAT(r.out, HasSubstr("· bottleneck "));
}

TEST_F(OcrExampleTest, CompiledEnginesReadTheSameLinesWithTheSameModelIds) {
  auto floor = ocr("--wait");
  ASSERT_EQ(floor.exit_code, 0) << floor.err;
  fs::remove_all(dir_ / "cache");
  // One crop per recogniser run, as on the floor: a batch pads its crops to one width, which changes what the
  // recogniser reads (PP-OCR's batching does the same), so only unbatched runs must agree line for line.
  auto sim = ocr("--wait --recognise-batch 1 --plugin-dir '" + (dir_ / "plugins").string() + "' --accept-ratio 1000");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr("models: ppocr_cls=ppocr_cls on rung_sim_ep, ppocr_det_v4=ppocr_det_v4 on rung_sim_ep, "
                                 "ppocr_rec_v4=ppocr_rec_v4 on rung_sim_ep\n"));
  EXPECT_EQ(lines_only(sim.out), lines_only(floor.out));
}

TEST_F(OcrExampleTest, JsonLinesGivesOneLinePerImageThenTheReportAndJsonOneDocumentOfTheSame) {
  { std::ofstream(dir_ / "images" / "broken.png") << "not a png"; }
  auto r = ocr("--json-lines --truth '" + (test::fixtures_dir() / "ocr").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // one image failed
  EXPECT_THAT(r.err, HasSubstr("broken.png: not a PNG, JPEG or BMP image"));
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_THAT(lines[0]["image"].get<std::string>(), HasSubstr("broken.png"));
  EXPECT_THAT(lines[0]["error"].get<std::string>(), HasSubstr("not a PNG, JPEG or BMP image"));
  const auto& page = lines[1];
  EXPECT_THAT(page["image"].get<std::string>(), HasSubstr("page.png"));
  ASSERT_EQ(page["lines"].size(), 7u);
  EXPECT_EQ(page["lines"][0]["text"], "Region-based segmentation");
  EXPECT_GT(page["lines"][0]["confidence"].get<double>(), 0.9);
  EXPECT_EQ(page["lines"][0]["box"].size(), 4u);
  EXPECT_EQ(page["lines"][0]["turned"], false);
  EXPECT_EQ(page["model_ids"]["ppocr_rec_v4"], "ppocr_rec_v4");
  EXPECT_EQ(page["truth"]["found"], 7);
  EXPECT_EQ(lines[2]["report"]["pages"], 2);
  EXPECT_EQ(lines[2]["report"]["failed"], 1);
  EXPECT_EQ(lines[2]["report"]["stages"].size(), 6u);
  EXPECT_EQ(lines[2]["truth"]["line_recall"], 1.0);

  // --json: one document, named by its schema and following it, holding the same pages and report.
  auto doc = ocr("--json --truth '" + (test::fixtures_dir() / "ocr").string() + "'");
  EXPECT_EQ(doc.exit_code, 1) << doc.err;
  const auto j = nlohmann::json::parse(doc.out);  // the whole of stdout: one document
  EXPECT_EQ(j["schema"], "rung-ocr-lines");
  ASSERT_EQ(j["pages"].size(), 2u);
  EXPECT_EQ(j["pages"][0], lines[0]);
  EXPECT_EQ(j["pages"][1], lines[1]);
  EXPECT_EQ(j["report"]["pages"], 2);
  EXPECT_EQ(j["truth"], lines[2]["truth"]);
  std::ofstream(dir_ / "ocr.json") << doc.out;
  EXPECT_EQ(test::schema_errors(test::schema_path("ocr-lines.schema.json"), dir_ / "ocr.json"), "");
  auto both = ocr("--json --json-lines");
  EXPECT_EQ(both.exit_code, 2) << "one form of JSON at a time";
}

TEST_F(OcrExampleTest, APageTurnedUpsideDownReadsTheSameLines) {
  auto image = read_image(kPage);
  ASSERT_TRUE(image.ok());
  fs::remove(dir_ / "images" / "page.png");
  ASSERT_TRUE(write_png(rotate_180(*image), dir_ / "images" / "page.png").ok());
  auto turned = ocr("--truth '" + (test::fixtures_dir() / "ocr").string() + "'");
  ASSERT_EQ(turned.exit_code, 0) << turned.err;
  EXPECT_THAT(turned.out, HasSubstr("page.png\n  Region-based segmentation  (0.9"));
  EXPECT_THAT(turned.out, HasSubstr("truth: 1 pages, 7 of 7 lines found (100.00%)"));
  auto bare = ocr("--no-classifier --truth '" + (test::fixtures_dir() / "ocr").string() + "'");
  EXPECT_THAT(bare.out, Not(HasSubstr("7 of 7 lines found")));
}

TEST_F(OcrExampleTest, AFolderWithoutImagesIsAClearError) {
  fs::remove(dir_ / "images" / "page.png");
  auto r = ocr("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds no images"));
}

// --- Usage and input errors: exit 2, as rung's commands, each before any page is read ---

TEST_F(OcrExampleTest, UsageErrorsExitTwoAsRungsCommandsDo) {
  const std::string bare = "'" + (test::binary_dir() / "ocr-lines").string() + "'";
  for (const std::string& args : {std::string(""), std::string("images"), std::string("x --models m --cache-dir c --no-such-option")}) {
    auto r = test::run_command(bare + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;  // CLI11's own codes were 104 to 109
  }
  auto help = test::run_command(bare + " --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Exit: 0"));
}

TEST_F(OcrExampleTest, TooManyDecodeThreadsIsAUsageErrorNotAnAbort) {
  auto r = ocr("--decode-threads 100000");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--decode-threads: 100000 is out of range; expected a whole number of threads from 1 to"));
}

class OcrTruthTest : public OcrExampleTest {
 protected:
  void SetUp() override {
    OcrExampleTest::SetUp();
    fs::create_directories(dir_ / "truth");
  }
  // Refused before the engine starts: exit 2, the truth file named with its problem, no cache made.
  void expect_refused(const std::string& problem) {
    auto r = ocr("--truth '" + (dir_ / "truth").string() + "'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("ocr-lines: --truth: truth file " + (dir_ / "truth" / "page.json").string()));
    EXPECT_THAT(r.err, HasSubstr(problem));
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(dir_ / "cache")) << "the engine started";
  }
  void write(const std::string& text) { std::ofstream(dir_ / "truth" / "page.json") << text; }
};

TEST_F(OcrTruthTest, ALoopOfLinksIsAClearErrorNotAnAbort) {
  fs::create_symlink(dir_ / "truth" / "page.json", dir_ / "truth" / "page.json");
  expect_refused("Too many levels of symbolic links");
}

TEST_F(OcrTruthTest, ATruthFolderThatIsALoopOfLinksIsAUsageError) {
  fs::create_symlink(dir_ / "loop", dir_ / "loop");
  auto r = ocr("--truth '" + (dir_ / "loop").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--truth"));
}

TEST_F(OcrTruthTest, TextThatIsNotJsonIsAnError) {
  write("{\"lines\": [");
  expect_refused("not valid JSON");
}

TEST_F(OcrTruthTest, NestingTooDeepIsAnError) {
  write(std::string(100000, '[') + std::string(100000, ']'));
  expect_refused("nested deeper than");
}

TEST_F(OcrTruthTest, NoLinesIsAnErrorNamingTheKey) {
  write(R"({"image": "page.png"})");
  expect_refused("lacks 'lines'");
}

TEST_F(OcrTruthTest, LinesOfTheWrongKindAreAnErrorNamingTheKey) {
  write(R"({"lines": {"text": "a"}})");
  expect_refused("'lines' must be a list");
}

TEST_F(OcrTruthTest, ALineWhoseTextIsNotAStringIsAnErrorNamingTheLine) {
  write(R"({"lines": [{"text": "Region-based segmentation"}, {"text": 7}]})");
  expect_refused("lines[1]: 'text' must be a string");
}

TEST_F(OcrTruthTest, ALineThatIsNotAnObjectIsAnError) {
  write(R"({"lines": ["Region-based segmentation"]})");
  expect_refused("lines[0]: must be a JSON object");
}

TEST_F(OcrTruthTest, AFifoIsAnErrorAndNeverWaitedOn) {
  ASSERT_EQ(::mkfifo((dir_ / "truth" / "page.json").c_str(), 0600), 0);
  expect_refused("is a FIFO");
}

TEST_F(OcrTruthTest, AFolderWhereTheFileShouldBeIsAnError) {
  fs::create_directories(dir_ / "truth" / "page.json");
  expect_refused("is a directory");
}

TEST_F(OcrTruthTest, APageWithNoTruthFileIsReadAndNotScored) {
  auto r = ocr("--truth '" + (dir_ / "truth").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("page.png: no truth file"));
  EXPECT_THAT(r.out, HasSubstr("truth: 0 pages"));
}

}  // namespace
}  // namespace rung
