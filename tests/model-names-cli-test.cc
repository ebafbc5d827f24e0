// One name per model: the sample models the commands use when no --model is
// given are called what the bundled variant manifest calls them (ppocr_cls,
// not the file's stem ch_ppocr_mobile_v2_0_cls_infer), so probe, bench,
// prepare and variants name a model alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

const fs::path kManifest = test::fixtures_dir().parent_path().parent_path() / "manifests" / "bundled.variants.json";

// The manifest's name for the group whose floor file has this file name.
std::string manifest_name_of(const std::string& file_name) {
  const auto manifest = nlohmann::json::parse(test::read_file(kManifest));
  for (const auto& g : manifest.at("groups")) {
    for (const auto& v : g.at("variants")) {
      const std::string path = v.contains("file") ? v["file"].value("path", "") : "";
      if (fs::path(path).filename() == file_name) return g.at("name").get<std::string>();
    }
  }
  return "";
}

class ModelNamesCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-model-names"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ModelNamesCliTest, TheBundledModelsAreCalledWhatTheManifestCallsThem) {
  const std::string cls = manifest_name_of("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  ASSERT_EQ(cls, "ppocr_cls") << kManifest;
  // The probe model by default is the smallest bundled file: the classifier.
  auto r = test::run_command(test::cli_path().string() + " probe --json --cache-dir '" + (dir_ / "cache").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_FALSE(out.at("floor").at("models").empty()) << r.out;
  EXPECT_EQ(out["floor"]["models"][0].at("model").get<std::string>(), cls) << r.out;
  // Every registered sample model answers to its manifest name.
  const std::string det = manifest_name_of("ch_PP-OCRv4_det_infer.onnx");
  ASSERT_EQ(det, "ppocr_det_v4");
  r = test::run_command(test::cli_path().string() + " probe --json --probe-model " + det + " --runs 1 --cache-dir '" +
                        (dir_ / "cache2").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["floor"]["models"][0].at("model").get<std::string>(), det) << r.out;
  // The file's stem is no name for it.
  r = test::run_command(test::cli_path().string() + " probe --json --probe-model ch_ppocr_mobile_v2_0_cls_infer --cache-dir '" +
                        (dir_ / "cache3").string() + "'");
  EXPECT_NE(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace rung
