// `rung doctor` driven as a user drives it: exit codes, golden text, JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string cli() { return "'" + test::cli_path().string() + "'"; }
std::string fixture(const std::string& name) { return (test::fixtures_dir() / "hardware" / name).string(); }

TEST(DoctorCliTest, TextMatchesTheGoldenReportForAFixtureDevice) {
  auto r = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --hardware-root " + fixture("intel-laptop-nvidia"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("CPU · ONNX Runtime 1.30.0 · 3 builds found\n"));
  auto from_hardware = r.out.substr(r.out.find("Hardware\n"));
  // Whether this machine has a software GPU to lend is the machine's, not the fixture's.
  if (auto at = from_hardware.find("  software gpu: "); at != std::string::npos) from_hardware.erase(at, from_hardware.find('\n', at) + 1 - at);
  // The ladder's notes say what the fetched 1.30.0 carries: linux/arm64's has no TensorRT or CUDA provider.
  const char* golden = test::kFetched130CarriesGpuProviders ? "doctor-intel-laptop-nvidia.txt" : "doctor-intel-laptop-nvidia.cpu-only-build.txt";
  EXPECT_EQ(from_hardware, test::read_file(test::fixtures_dir() / ".." / "golden" / golden));
}

// The ARM Linux boards: the GPU on the SoC by its driver, the board by its devicetree, the
// inference pool on the big cores, and the ladder each walks.
TEST(DoctorCliTest, ArmBoardsNameTheirGpuTheirBigCoresAndTheirLadder) {
  auto mali = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --hardware-root " + fixture("rockchip-rk3588-mali"));
  ASSERT_EQ(mali.exit_code, 0) << mali.err;
  EXPECT_THAT(mali.out, HasSubstr("\n  cpu: 4 x Cortex-A55 + 4 x Cortex-A76 (8 cores, 8 threads)\n"
                                  "  inference pool: 4 threads: the fast cores of 4 big + 4 LITTLE (cpu_capacity 1024, 414)\n"));
  EXPECT_THAT(mali.out, HasSubstr("\n  board: Xunlong Orange Pi 5\n  gpu: Arm Mali on the SoC at /dev/dri/renderD128 (driver panthor)\n"));
  EXPECT_THAT(mali.out, HasSubstr("\nLadder (arm-soc-gpu)\n  WebGPU "));
  auto rb3 = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --json --hardware-root " + fixture("qualcomm-rb3-gen2"));
  ASSERT_EQ(rb3.exit_code, 0) << rb3.err;
  auto j = nlohmann::json::parse(rb3.out);
  EXPECT_EQ(j["platforms"], nlohmann::json::array({"qualcomm-hexagon", "arm-soc-gpu"}));
  ASSERT_EQ(j["ladder"].size(), 3u);
  EXPECT_EQ(j["ladder"][0]["rung"], "qnn-htp");
  EXPECT_EQ(j["ladder"][1]["rung"], "webgpu");
  EXPECT_EQ(j["hardware"]["cpu"]["fast_cores"], 4);
  EXPECT_EQ(j["hardware"]["cpu"]["inference_threads"], 4);
  EXPECT_EQ(j["hardware"]["soc_gpus"], nlohmann::json::parse(R"([{"node": "/dev/dri/renderD128", "driver": "msm_dpu", "vendor": "Qualcomm"}])"));
  EXPECT_EQ(j["hardware"]["board"], "Qualcomm Technologies, Inc. Robotics RB3gen2");
}

TEST(DoctorCliTest, WindowsDevicesNameTheirAdaptersAndTheirLadder) {
  auto laptop = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --hardware-root " + fixture("windows-nvidia-laptop"));
  ASSERT_EQ(laptop.exit_code, 0) << laptop.err;
  EXPECT_THAT(laptop.out, HasSubstr("\n  os: windows\n  cpu: 13th Gen Intel(R) Core(TM) i7-13700H (14 cores, 20 threads)\n"
                                    "  inference pool: 6 threads: the fast cores of 6 + 8 cores (EfficiencyClass 1 and 0)\n"));
  EXPECT_THAT(laptop.out, HasSubstr("\n  adapter: NVIDIA GeForce RTX 4060 Laptop GPU (10de:28a0, 7948 MB dedicated)\n"
                                    "  adapter: Microsoft Basic Render Driver (1414:008c, software, no GPU)\n"));
  EXPECT_THAT(laptop.out, HasSubstr("\nLadder (nvidia, intel-gpu, windows-directx)\n"));
  // This Linux build has no DirectML: the rung says so rather than vanishing.
  EXPECT_THAT(laptop.out, HasSubstr("\n  DirectML   DmlExecutionProvider         f32                      not in ONNX Runtime 1.30.0\n"));

  auto damaged = test::make_temp_dir("rung-doctor-windows");
  std::ofstream(damaged / "windows.json") << R"({"dxgi_adapters": [{"name": "x", "vendor_id": "nvidia", "device_id": "1"}]})";
  auto bad = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --json --hardware-root " + damaged.string());
  ASSERT_EQ(bad.exit_code, 0) << bad.err;  // the device is still described: as far as it could be read
  auto j = nlohmann::json::parse(bad.out);
  EXPECT_EQ(j["hardware"]["os"], "windows");
  ASSERT_EQ(j["hardware"]["unreadable"].size(), 1u);
  EXPECT_THAT(j["hardware"]["unreadable"][0].get<std::string>(), HasSubstr("vendor_id 'nvidia' is not 1 to 4 hex digits"));
  EXPECT_EQ(j["platforms"], nlohmann::json::array({"no-gpu-seen"}));
  fs::remove_all(damaged);
}

TEST(DoctorCliTest, JsonDescribesBuildsHardwareAndLadder) {
  auto r = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --json --hardware-root " + fixture("nvidia-desktop"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["about"], "CPU · ONNX Runtime 1.30.0 · 3 builds found");
  ASSERT_EQ(j["builds"].size(), 3u);
  EXPECT_EQ(j["builds"][0]["version"], "1.30.0");
  EXPECT_EQ(j["builds"][0]["chosen"], true);
  EXPECT_EQ(j["builds"][0]["api_version"], 29);
  EXPECT_EQ(j["builds"][2]["version"], "1.28.2");
  EXPECT_EQ(j["builds"][2]["api_version"], 28);
  EXPECT_EQ(j["builds"][0]["origin"], "beside executable");
  EXPECT_EQ(j["hardware"]["nvidia_driver"], "550.54.14");
  EXPECT_EQ(j["platforms"], nlohmann::json::array({"nvidia"}));
  ASSERT_EQ(j["ladder"].size(), 3u);
  EXPECT_EQ(j["ladder"][0]["rung"], "tensorrt");
  EXPECT_EQ(j["ladder"][0]["ready"], false);
  EXPECT_EQ(j["builds"][1]["score"], 1);
  if (test::kFetched130CarriesGpuProviders) {
    // A CUDA-carrying build on an NVIDIA desktop scores the vendor fit.
    EXPECT_EQ(j["builds"][0]["score"], 4);
    EXPECT_THAT(j["chosen"]["reason"].get<std::string>(), HasSubstr("TensorRT for the NVIDIA GPU"));
    EXPECT_EQ(j["ladder"][0]["provider_in_build"], true);
    EXPECT_EQ(j["ladder"][0]["note"], "ONNX Runtime's TensorRT provider (libonnxruntime_providers_tensorrt.so) is not beside libonnxruntime.so.1");
  } else {
    // Three CPU-only builds fit alike: the newest, first in the search order, is taken.
    EXPECT_EQ(j["builds"][0]["score"], 1);
    EXPECT_THAT(j["chosen"]["reason"].get<std::string>(), HasSubstr("score 1: CPU only"));
    EXPECT_EQ(j["ladder"][0]["provider_in_build"], false);
    EXPECT_EQ(j["ladder"][0]["note"], "not in ONNX Runtime 1.30.0");
  }
  EXPECT_EQ(j["ladder"][2]["rung"], "cpu");
  EXPECT_EQ(j["ladder"][2]["ready"], true);
  // The desktop's Xeon-class flags: AVX-512 with VNNI, no AMX.
  EXPECT_EQ(j["hardware"]["cpu"]["quantised_speed_features"],
            nlohmann::json({{"avx2", true}, {"avx512", true}, {"vnni", true}, {"amx", false}}));
}

TEST(DoctorCliTest, NoBuildFoundExitsNonZeroListingWhereItLookedAndHowToFetch) {
  // A copy of the CLI in an empty directory has no runtimes/ beside it.
  auto dir = test::make_temp_dir("rung-lonely");
  test::copy_cli_to(dir);
  auto r = test::run_command("env -u RUNG_ORT_DIR '" + (dir / "rung").string() + "' doctor");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("no usable ONNX Runtime build found"));
  EXPECT_THAT(r.err, HasSubstr("searched " + (dir / "runtimes").string()));
  EXPECT_THAT(r.err, HasSubstr("tools/fetch-deps.sh"));
  EXPECT_EQ(r.out, "");
  fs::remove_all(dir);
}

// A setting that names no usable build is "no runtime" (exit 3), as in every command (private-dirs-cli-test).
TEST(DoctorCliTest, BadRungOrtDirIsNoRuntimeNamingIt) {
  auto r = test::run_command("RUNG_ORT_DIR=relative/dir " + cli() + " doctor");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("RUNG_ORT_DIR=relative/dir is a relative path"));
  r = test::run_command("RUNG_ORT_DIR= " + cli() + " doctor");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("RUNG_ORT_DIR is set but empty"));
}

TEST(DoctorCliTest, RungOrtDirWinsOutright) {
  auto r = test::run_command("RUNG_ORT_DIR='" + test::runtime_dir("1.28.2").string() + "' " + cli() + " doctor --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chosen"]["version"], "1.28.2");
  EXPECT_EQ(j["chosen"]["reason"], "RUNG_ORT_DIR wins outright");
  EXPECT_EQ(j["about"], "CPU · ONNX Runtime 1.28.2 · 3 builds found");
}

TEST(DoctorCliTest, BrokenBuildInTheSearchIsListedAsSkippedAndTheRestWork) {
  auto dir = test::make_temp_dir("rung-broken");
  fs::create_directories(dir / "zz-fake");
  std::ofstream(dir / "zz-fake" / "libonnxruntime.so") << "plain text";
  auto r = test::run_command("env -u RUNG_ORT_DIR " + cli() + " doctor --ort-dir '" + dir.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("x " + (dir / "zz-fake" / "libonnxruntime.so").string() + " (explicit)"));
  EXPECT_THAT(r.out, HasSubstr("skipped: " + (dir / "zz-fake" / "libonnxruntime.so").string() + ": not loadable"));
  EXPECT_THAT(r.out, StartsWith("CPU · ONNX Runtime 1.30.0 · 4 builds found"));
  fs::remove_all(dir);
}

TEST(DoctorCliTest, UnknownOptionIsAUsageError) {
  auto r = test::run_command(cli() + " doctor --no-such-flag");
  EXPECT_EQ(r.exit_code, 2);
  r = test::run_command(cli());
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace rung
