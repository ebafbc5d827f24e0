// The software GPU adapter (Mesa's lavapipe from bookworm-backports, fetched
// by tools/fetch-deps.sh): found where the build links it, refused when it is
// broken or others can write to it, lent to child processes only; and, when it
// is there, a real WebGPU rung: the probe's verdict with its times, conform,
// bench and parity all running on it. Those tests are skipped, saying why, on a
// machine without the adapter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "model_builder.h"
#include "os/child_environment.h"
#include "os/child_process.h"
#include "rung/software_gpu.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SoftwareGpuTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-software-gpu"); }
  void TearDown() override {
    stop_lending_software_gpu();
    fs::remove_all(dir_);
  }

  // A directory laid out as fetch-deps.sh lays it, its manifest naming `driver`.
  fs::path fake_adapter(const fs::path& driver) {
    const fs::path d = dir_ / "adapter";
    fs::create_directories(d);
    std::ofstream(d / "lvp_icd.json") << nlohmann::json{{"file_format_version", "1.0.0"}, {"ICD", {{"library_path", driver.string()}}},
                                                          {"rung", {{"mesa", "25.0.7-2~bpo12+1"}}}}
                                             .dump();
    return d;
  }

  fs::path dir_;
};

TEST_F(SoftwareGpuTest, AManifestNamingAMissingDriverIsRefusedWithTheFix) {
  const fs::path d = fake_adapter(dir_ / "gone" / "libvulkan_lvp.so");
  auto gpu = find_software_gpu({d, std::nullopt, false});
  ASSERT_FALSE(gpu);
  EXPECT_THAT(gpu.error().message, HasSubstr("gone/libvulkan_lvp.so, which is not there (moved? run tools/fetch-deps.sh again)"));
}

TEST_F(SoftwareGpuTest, ADriverOthersCanWriteIsRefused) {
  const fs::path driver = dir_ / "lib" / "libvulkan_lvp.so";
  fs::create_directories(driver.parent_path());
  std::ofstream(driver) << "not really a driver";
  fs::permissions(driver.parent_path(), fs::perms::owner_all | fs::perms::others_all);
  auto gpu = find_software_gpu({fake_adapter(driver), std::nullopt, false});
  ASSERT_FALSE(gpu);
  EXPECT_EQ(gpu.error().code, ErrorCode::kPermission);
  EXPECT_THAT(gpu.error().message, HasSubstr("is writable by other users"));
}

TEST_F(SoftwareGpuTest, NotFoundSaysWhereItLookedAndHowToFetchIt) {
  auto gpu = find_software_gpu({std::nullopt, dir_, false});
  ASSERT_FALSE(gpu);
  EXPECT_THAT(gpu.error().message, HasSubstr((dir_ / "software-gpu").string()));
  EXPECT_THAT(gpu.error().message, HasSubstr("tools/fetch-deps.sh fetches it"));
}

// A shell line in a child process started as rung starts every child; its exit code.
int run_shell(const std::string& line) {
  auto child = ChildProcess::spawn("/bin/sh", {"-c", line}, "/dev/null");
  if (!child) return -1;
  return child->wait(ChildProcess::Clock::now() + std::chrono::seconds(10)).exit_code;
}

TEST_F(SoftwareGpuTest, LendingReachesChildrenAndNeverTheHost) {
  const fs::path driver = dir_ / "lib" / "libvulkan_lvp.so";
  fs::create_directories(driver.parent_path());
  std::ofstream(driver) << "stand-in";
  fs::permissions(driver.parent_path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  auto gpu = find_software_gpu({fake_adapter(driver), std::nullopt, false});
  ASSERT_TRUE(gpu) << gpu.error().message;
  EXPECT_EQ(gpu->mesa_version, "25.0.7-2~bpo12+1");
  lend_software_gpu(*gpu);
  EXPECT_EQ(std::getenv("VK_DRIVER_FILES"), nullptr) << "the host's own environment is untouched";
  const fs::path seen = dir_ / "seen";
  ASSERT_EQ(run_shell("echo \"$VK_DRIVER_FILES|$VK_ICD_FILENAMES|$LD_LIBRARY_PATH\" > '" + seen.string() + "'"), 0);
  const std::string manifest = (dir_ / "adapter" / "lvp_icd.json").string();
  EXPECT_THAT(test::read_file(seen), HasSubstr(manifest + "|" + manifest + "|" + (dir_ / "adapter").string()));
  stop_lending_software_gpu();
  ASSERT_EQ(run_shell("echo \"[$VK_DRIVER_FILES]\" > '" + seen.string() + "'"), 0);
  EXPECT_EQ(test::read_file(seen), "[]\n");
}

// The real adapter, beside the built rung (tools/fetch-deps.sh fetched it, the build linked it).
class WebGpuOnLavapipeTest : public SoftwareGpuTest {
 protected:
  void SetUp() override {
    SoftwareGpuTest::SetUp();
    auto gpu = find_software_gpu({std::nullopt, test::binary_dir(), false});
    if (!gpu) GTEST_SKIP() << "no software GPU adapter here (" << gpu.error().message << ")";
    test::ModelBuilder m;
    m.input("x", {1, 64}).node("Relu", {"x"}, {"r"}).node("Mul", {"r", "x"}, {"y"}).output("y", {1, 64});
    model_ = m.save(dir_ / "small.onnx");
  }

  std::string rung(const std::string& command, const std::string& args) {
    return "env -u RUNG_ORT_DIR -u RUNG_SOFTWARE_GPU -u RUNG_FORCE_RUNG '" + test::cli_path().string() + "' " + command + " --ort-dir " +
           test::runtime_dir("1.30.0").string() + " " + args;
  }

  fs::path model_;
};

TEST_F(WebGpuOnLavapipeTest, DoctorSaysTheAdapterIsASoftwareOne) {
  auto r = test::run_command(rung("doctor", "--software-gpu"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("software gpu: lavapipe (Mesa 25.0.7"));
  EXPECT_THAT(r.out, HasSubstr("lent to the workers"));
  EXPECT_THAT(r.out, HasSubstr("WebGPU on lavapipe (software)"));
  auto without = test::run_command(rung("doctor", ""));
  EXPECT_THAT(without.out, HasSubstr("not lent (--software-gpu or RUNG_SOFTWARE_GPU=1 lends it)"));
}

TEST_F(WebGpuOnLavapipeTest, TheProbeGivesWebGpuARealVerdictWithItsTimes) {
  auto r = test::run_command(rung("probe", "--model small=" + model_.string() + " --cache-dir '" + (dir_ / "cache").string() +
                                               "' --software-gpu --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // A shader-running rung on the CPU is slower than the CPU itself: measured, not failed.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(WebGPU on lavapipe \(software\)\s+small\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+× \[[0-9.]+–[0-9.]+\]\s+[0-9]+/[0-9]+ [0-9]+%\s+slower: [0-9.]+× the floor's time over [0-9]+ paired runs)")))
      << r.out;
  // The first line counts it among the verdicts (the table above gives the reason).
  EXPECT_THAT(r.out, HasSubstr("· WebGPU on lavapipe (software) slower (see the table)"));
}

TEST_F(WebGpuOnLavapipeTest, ConformBenchAndParityRunOnIt) {
  const fs::path test_dir = dir_ / "suite" / "node" / "test_relu_mul";
  fs::create_directories(test_dir / "test_data_set_0");
  fs::copy_file(model_, test_dir / "model.onnx");
  Tensor x;
  x.name = "x";
  x.type = ElementType::kFloat;
  x.shape = {1, 64};
  std::vector<float> xs(64), ys(64);
  for (int i = 0; i < 64; ++i) {
    xs[static_cast<std::size_t>(i)] = static_cast<float>(i - 32) / 8;
    ys[static_cast<std::size_t>(i)] = std::max(xs[static_cast<std::size_t>(i)], 0.0f) * xs[static_cast<std::size_t>(i)];
  }
  x.bytes.resize(256);
  std::memcpy(x.bytes.data(), xs.data(), 256);
  Tensor y = x;
  y.name = "y";
  std::memcpy(y.bytes.data(), ys.data(), 256);
  ASSERT_TRUE(write_tensor_file(x, test_dir / "test_data_set_0" / "input_0.pb"));
  ASSERT_TRUE(write_tensor_file(y, test_dir / "test_data_set_0" / "output_0.pb"));

  auto c = test::run_command(rung("conform", "--software-gpu --rung webgpu --rung cpu --details --out-json '" + (dir_ / "c.json").string() +
                                                 "' --suite '" + (dir_ / "suite").string() + "'"));
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_TRUE(std::regex_search(c.out, std::regex(R"(WebGPU on lavapipe \(software\) · ONNX Runtime 1\.30\.0\s+1\s+0\s+0)"))) << c.out;
  const auto rec = nlohmann::json::parse(test::read_file(dir_ / "c.json"));
  EXPECT_EQ(rec["tests"][0]["results"]["webgpu@1.30.0"]["placement"][0]["provider"], "WebGpuExecutionProvider");

  auto b = test::run_command(rung("bench", model_.string() + " --software-gpu --rung webgpu --runs 3 --warmup 1"));
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_TRUE(std::regex_search(b.out, std::regex(R"(WebGPU on lavapipe \(software\) .*match)"))) << b.out;
  EXPECT_THAT(b.out, HasSubstr("WebGpuExecutionProvider ran"));

  auto p = test::run_command(rung("parity", "--software-gpu --ref " + model_.string() + ",rung=cpu --cand " + model_.string() +
                                                 ",rung=webgpu --inputs '" + test_dir.string() + "'"));
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_THAT(p.out, HasSubstr("WebGPU on lavapipe (software) · ONNX Runtime 1.30.0"));
  EXPECT_THAT(p.out, HasSubstr("PASS"));
}

}  // namespace
}  // namespace rung
