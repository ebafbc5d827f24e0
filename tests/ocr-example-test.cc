// The example application on a real scanned page (Debian's python3-skimage
// ships it): on the CPU floor, and on the simulated accelerator's compiled engines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

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
  auto r = ocr("");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("page.png\n"));
  EXPECT_THAT(r.out, HasSubstr("Region-based segmentation"));
  EXPECT_THAT(r.out, HasSubstr("histogram of grey values"));
  EXPECT_THAT(r.out, HasSubstr("unambiguously as either object or background"));
  EXPECT_THAT(r.out, HasSubstr("models: ppocr_det_v4=ppocr_det_v4 ppocr_rec_v4=ppocr_rec_v4 · detector on cpu"));
}

TEST_F(OcrExampleTest, CompiledEnginesReadTheSameLinesWithTheSameModelIds) {
  auto floor = ocr("--wait");
  ASSERT_EQ(floor.exit_code, 0) << floor.err;
  fs::remove_all(dir_ / "cache");
  auto sim = ocr("--wait --plugin-dir '" + (dir_ / "plugins").string() + "' --accept-ratio 1000");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_THAT(sim.out, HasSubstr("detector on rung_sim_ep, recogniser on rung_sim_ep"));
  EXPECT_EQ(lines_only(sim.out), lines_only(floor.out));
  EXPECT_THAT(sim.out, HasSubstr("models: ppocr_det_v4=ppocr_det_v4 ppocr_rec_v4=ppocr_rec_v4"));
}

TEST_F(OcrExampleTest, AFolderWithoutImagesIsAClearError) {
  fs::remove(dir_ / "images" / "page.png");
  auto r = ocr("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds no images"));
}

}  // namespace
}  // namespace rung
