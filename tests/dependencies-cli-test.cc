// `rung doctor` and `rung probe` on a runtime directory of fake GPU providers
// (tests/fake-libraries) beside the real 1.30.0 core: both name what is really
// missing, in the same words, and a provider from another ONNX Runtime is named as
// such and never loaded. These run against this machine's own loader paths, so a
// case whose library this machine has installed (a GPU machine's driver) is skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "os/loader_search.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Whether this machine's loader finds `name` without any help from the test.
bool installed_here(const std::string& name) {
  LoaderPaths paths = LoaderPaths::of_this_process();
  for (const auto& [key, file] : paths.cache) {
    if (key == name) return true;
  }
  std::vector<fs::path> dirs = paths.library_path;
  dirs.insert(dirs.end(), paths.system_dirs.begin(), paths.system_dirs.end());
  return std::any_of(dirs.begin(), dirs.end(), [&](const fs::path& d) { return fs::exists(d / name); });
}

class DependenciesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-deps-cli");
    test::ModelBuilder b;
    b.input("x", {1, 8}).node("Relu", {"x"}, {"y"}).output("y", {1, 8});
    b.save(dir_ / "tiny.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A runtime directory of GPU providers from ONNX Runtime `version`, less the vendor files named.
  fs::path runtime(const std::string& version, const std::vector<std::string>& removed) {
    fs::path rt = dir_ / ("rt-" + version);
    test::make_fake_gpu_runtime(rt, version, {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so"});
    for (const auto& f : removed) fs::remove(rt / "vendor" / f);
    return rt;
  }
  std::string command(const std::string& what, const fs::path& rt, const std::string& extra = "") const {
    return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_PLUGIN_DIR '" + test::cli_path().string() + "' " + what +
           " --ort-dir '" + rt.string() + "' --hardware-root " + (test::fixtures_dir() / "hardware" / "nvidia-desktop").string() +
           " " + extra;
  }
  std::string probe(const fs::path& rt, const std::string& extra = "") const {
    return command("probe", rt, "--model tiny=" + (dir_ / "tiny.onnx").string() + " --cache-dir '" + (dir_ / "cache").string() +
                                    "' --force " + extra);
  }

  fs::path dir_;
};

TEST_F(DependenciesCliTest, DoctorAndProbeNameTheDriverAndTensorRtInTheSameWords) {
  if (installed_here("libcuda.so.1") || installed_here("libnvinfer.so.10")) GTEST_SKIP() << "this machine has a driver or TensorRT";
  auto rt = runtime("1.30.0", {"libcuda.so.1", "libnvinfer.so.10", "libnvonnxparser.so.10"});
  const std::string trt = "TensorRT 10 (libnvinfer.so.10, libnvonnxparser.so.10) not found";
  const std::string cuda = "the NVIDIA driver (libcuda.so.1) is not installed";

  auto doctor = test::run_command(command("doctor --json", rt));
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  auto d = nlohmann::json::parse(doctor.out);
  ASSERT_EQ(d["ladder"].size(), 3u);
  EXPECT_EQ(d["ladder"][0]["note"], trt);
  EXPECT_EQ(d["ladder"][0]["ready"], false);
  EXPECT_EQ(d["ladder"][1]["note"], cuda);
  EXPECT_EQ(d["ladder"][1]["provider_onnxruntime_version"], "1.30.0");
  nlohmann::json driver;
  for (const auto& n : d["ladder"][1]["needs"]) {
    if (n["name"] == "libcuda.so.1") driver = n;
  }
  EXPECT_EQ(driver["what"], "the NVIDIA driver");
  EXPECT_EQ(driver["path"], nullptr);
  EXPECT_EQ(driver["needed_by"], "libonnxruntime_providers_cuda.so");

  // The probe still decides: it builds each rung (a row per model, with a build time)
  // and, when the build fails, says why in doctor's words.
  auto probed = test::run_command(probe(rt, "--json"));
  ASSERT_EQ(probed.exit_code, 0) << probed.err;
  auto p = nlohmann::json::parse(probed.out);
  EXPECT_EQ(p["about"], "CPU · ONNX Runtime 1.30.0 · 2 rungs failed");
  ASSERT_EQ(p["rungs"].size(), 2u);
  for (const auto& r : p["rungs"]) {
    EXPECT_EQ(r["reason"], r["rung"] == "cuda" ? cuda : trt);
    ASSERT_EQ(r["models"].size(), 1u) << r["rung"];
    EXPECT_EQ(r["models"][0]["verdict"], "failed");
    EXPECT_EQ(r["models"][0]["reason"], r["reason"]);
  }
}

TEST_F(DependenciesCliTest, ProvidersFromAnotherOnnxRuntimeAreNamedBeforeAnythingLoadsThem) {
  auto rt = runtime("1.29.0", {});
  const std::string mismatch = "provider from ONNX Runtime 1.29.0 beside the 1.30.0 core";
  auto doctor = test::run_command(command("doctor", rt));
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  auto ladder = doctor.out.substr(doctor.out.find("\nLadder") + 1);
  EXPECT_EQ(ladder, test::read_file(test::fixtures_dir() / ".." / "golden" / "doctor-providers-from-1.29.txt"));

  auto probed = test::run_command(probe(rt, "--json"));
  ASSERT_EQ(probed.exit_code, 0) << probed.err;
  auto p = nlohmann::json::parse(probed.out);
  EXPECT_EQ(p["about"], "CPU · ONNX Runtime 1.30.0 · 2 rungs failed");
  for (const auto& r : p["rungs"]) EXPECT_TRUE(r["models"].empty()) << r["rung"] << " was started";

  auto text = test::run_command(probe(rt));
  EXPECT_THAT(text.out, HasSubstr("CUDA                 -                                        -          -                    -             -  failed: " + mismatch));
}

TEST_F(DependenciesCliTest, APluginWhoseOwnDependencyIsMissingIsARungThatSaysSo) {
  // librung_ep_helper.so.2 is on no machine: the plugin cannot load anywhere.
  auto rt = runtime("1.30.0", {});
  fs::create_directories(dir_ / "plugins");
  fs::copy_file(test::fake_libraries_dir() / "plugin" / "librung_fake_ep.so", dir_ / "plugins" / "librung_fake_ep.so");
  const std::string plugins = "--plugin-dir '" + (dir_ / "plugins").string() + "'";
  auto doctor = test::run_command(command("doctor --json", rt, plugins));
  ASSERT_EQ(doctor.exit_code, 0) << doctor.err;
  auto d = nlohmann::json::parse(doctor.out);
  EXPECT_EQ(d["ladder"][0]["rung"], "rung_fake_ep");
  EXPECT_EQ(d["ladder"][0]["note"], "librung_ep_helper.so.2 not found");

  auto probed = test::run_command(probe(rt, "--json " + plugins));
  ASSERT_EQ(probed.exit_code, 0) << probed.err;
  auto p = nlohmann::json::parse(probed.out);
  ASSERT_FALSE(p["rungs"].empty());
  EXPECT_EQ(p["rungs"][0]["rung"], "rung_fake_ep");
  EXPECT_EQ(p["rungs"][0]["verdict"], "failed");
  EXPECT_EQ(p["rungs"][0]["reason"], "librung_ep_helper.so.2 not found");
}

}  // namespace
}  // namespace rung
