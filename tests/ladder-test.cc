// Each fixture device gets the right ladder and the right runtime build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>

#include "rung/ladder.h"
#include "rung/rung_names.h"
#include "rung/runtime.h"
#include "rung/standing.h"
#include "test_support.h"

namespace rung {
namespace {
using ::testing::ElementsAre;
using ::testing::Contains;
using ::testing::Not;
using ::testing::ElementsAreArray;

Hardware fixture(const std::string& name) { return detect_hardware(test::fixtures_dir() / "hardware" / name); }

std::vector<std::string> names(const std::vector<RungSpec>& rungs) {
  std::vector<std::string> out;
  for (const auto& r : rungs) out.push_back(r.name);
  return out;
}

// Builds as they exist in the wild, by the providers each carries.
const std::vector<std::string> kCudaBuild = {"TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"};
const std::vector<std::string> kRocmBuild = {"MIGraphXExecutionProvider", "CPUExecutionProvider"};
const std::vector<std::string> kOpenVinoBuild = {"OpenVINOExecutionProvider", "CPUExecutionProvider"};
const std::vector<std::string> kQnnBuild = {"QNNExecutionProvider", "CPUExecutionProvider"};
const std::vector<std::string> kWebGpuBuild = {"WebGpuExecutionProvider", "CPUExecutionProvider"};
const std::vector<std::string> kCpuBuild = {"CPUExecutionProvider"};

RuntimeBuild build(const std::string& version, const std::vector<std::string>& providers, const Hardware& hw,
                   SearchOrigin origin = SearchOrigin::kBesideExecutable) {
  RuntimeBuild b;
  b.library = "/opt/rt/" + version + "/libonnxruntime.so";
  b.loaded = true;
  b.version = version;
  b.providers = providers;
  b.origin = origin;
  b.score = score_build(providers, hw, &b.score_reason);
  return b;
}

// Which build a device picks from a shelf holding one of each kind, in this search order.
std::string choice(const Hardware& hw) {
  std::vector<RuntimeBuild> shelf = {build("cpu", kCpuBuild, hw),           build("webgpu", kWebGpuBuild, hw),
                                     build("openvino", kOpenVinoBuild, hw), build("rocm", kRocmBuild, hw),
                                     build("cuda", kCudaBuild, hw),         build("qnn", kQnnBuild, hw)};
  auto i = choose_build(shelf);
  return i ? shelf[*i].version : "none";
}

TEST(LadderTest, NvidiaDesktopIsTensorRtThenCudaThenCpu) {
  auto hw = fixture("nvidia-desktop");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("nvidia"));
  EXPECT_THAT(names(l.rungs), ElementsAre("tensorrt", "cuda", "cpu"));
  EXPECT_FALSE(l.only_rungs_in_build);
  EXPECT_EQ(l.describe(), "TensorRT -> CUDA -> CPU");
  EXPECT_EQ(l.rungs[0].form, ModelForm::kF32ToF16Engine);
  EXPECT_TRUE(l.rungs[0].compiles_engines);
  EXPECT_EQ(l.rungs[0].append, AppendMethod::kTensorRtV2);
  EXPECT_EQ(l.rungs[1].append, AppendMethod::kCudaV2);
  EXPECT_FALSE(l.rungs[1].compiles_engines);
  EXPECT_EQ(choice(hw), "cuda");
}

TEST(LadderTest, AmdWithRocmIsMigraphxThenCpu) {
  auto hw = fixture("amd-rocm-desktop");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("amd-rocm"));
  EXPECT_THAT(names(l.rungs), ElementsAre("migraphx", "cpu"));
  EXPECT_TRUE(l.rungs[0].compiles_engines);
  EXPECT_EQ(l.rungs[0].append, AppendMethod::kKeyValue);
  EXPECT_EQ(choice(hw), "rocm");
}

TEST(LadderTest, AmdWithoutRocmFallsToTheGenericRung) {
  auto hw = fixture("amd-rocm-desktop");
  hw.rocm_kfd = false;
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("other-gpu"));
  EXPECT_THAT(names(l.rungs), ElementsAre("webgpu", "cpu"));
  EXPECT_EQ(choice(hw), "webgpu");
}

TEST(LadderTest, IntelLaptopWithNvidiaPutsTheVendorRungsFirstThenOpenVino) {
  auto hw = fixture("intel-laptop-nvidia");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("nvidia", "intel-gpu"));
  EXPECT_THAT(names(l.rungs), ElementsAre("tensorrt", "cuda", "openvino", "cpu"));
  // The CUDA build fits the NVIDIA card perfectly; OpenVINO on the iGPU comes second.
  EXPECT_EQ(choice(hw), "cuda");
  std::vector<RuntimeBuild> no_cuda = {build("cpu", kCpuBuild, hw), build("webgpu", kWebGpuBuild, hw),
                                       build("openvino", kOpenVinoBuild, hw)};
  EXPECT_EQ(no_cuda[*choose_build(no_cuda)].version, "openvino");
}

TEST(LadderTest, QualcommTabletIsQnnHtpOnTheQuantisedForm) {
  auto hw = fixture("qualcomm-tablet");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("qualcomm-hexagon"));
  // XNNPACK (its Arm cores' kernels) below the NPU, above the floor, when the build carries it.
  EXPECT_THAT(names(l.rungs), ElementsAre("qnn-htp", "xnnpack", "cpu"));
  EXPECT_THAT(names(l.for_build(kQnnBuild)), ElementsAre("qnn-htp", "cpu"));
  EXPECT_EQ(l.rungs[0].form, ModelForm::kQuantized);
  EXPECT_EQ(choice(hw), "qnn");
}

TEST(LadderTest, QualcommWithoutHexagonIsTheGenericRung) {
  auto hw = fixture("qualcomm-tablet");
  hw.hexagon_dsp = false;
  EXPECT_THAT(names(ladder_for(hw).rungs), ElementsAre("webgpu", "xnnpack", "cpu"));
  EXPECT_EQ(choice(hw), "webgpu");
}

TEST(LadderTest, RaspberryPiSeesNoGpuAndEndsOnTheCpu) {
  // A Pi-class board: no GPU ONNX Runtime uses, no NPU; only the rungs a build carries are tried, then the CPU.
  auto hw = fixture("raspberry-pi-4");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("no-gpu-seen"));
  ASSERT_FALSE(l.rungs.empty());
  EXPECT_EQ(l.rungs.back().name, "cpu");
  EXPECT_THAT(names(l.rungs), Not(Contains("qnn-htp")));
}

TEST(LadderTest, BoardWithMaliTriesWebGpuThenTheCpu) {
  auto hw = fixture("rockchip-rk3588-mali");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("arm-soc-gpu")) << "not also other-gpu: the Mali claims its render node";
  EXPECT_THAT(names(l.rungs), ElementsAre("webgpu", "xnnpack", "cpu"));
  EXPECT_FALSE(l.only_rungs_in_build);
}

TEST(LadderTest, QualcommLinuxBoardIsQnnHtpThenAdrenoThenTheCpu) {
  auto hw = fixture("qualcomm-rb3-gen2");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("qualcomm-hexagon", "arm-soc-gpu"));
  EXPECT_THAT(names(l.rungs), ElementsAre("qnn-htp", "webgpu", "xnnpack", "cpu"));
  hw.hexagon_dsp = false;
  EXPECT_THAT(names(ladder_for(hw).rungs), ElementsAre("webgpu", "xnnpack", "cpu"));
}

TEST(LadderTest, ABoardGpuOfAnotherMakeIsTheGenericRung) {
  Hardware hw;
  hw.dri_render_nodes = {"/dev/dri/renderD128"};
  hw.soc_gpus = {{"/dev/dri/renderD128", "v3d", Vendor::kUnknown}};
  EXPECT_THAT(ladder_for(hw).platforms, ElementsAre("other-gpu"));
  // A Mali beside a PCI card of no vendor rung: both platforms.
  hw.soc_gpus = {{"/dev/mali0", "mali", Vendor::kArm}};
  hw.gpus = {PciDevice{"0000:01:00.0", 0x030000, 0x1a03, 0x2000, Vendor::kUnknown}};
  EXPECT_THAT(ladder_for(hw).platforms, ElementsAre("arm-soc-gpu", "other-gpu"));
  EXPECT_THAT(names(ladder_for(hw).rungs), ElementsAre("webgpu", "cpu"));
  // On Android the Mali is the generic rung's, as before.
  hw.gpus.clear();
  hw.os = OsKind::kAndroid;
  EXPECT_THAT(ladder_for(hw).platforms, ElementsAre("other-gpu"));
}

TEST(LadderTest, AnNvidiaDriverWithNoGpuInSysIsTheNvidiaPlatformAlone) {
  // A container that hides /sys/bus/pci but has the driver: the NVIDIA rungs, and not "no GPU seen".
  auto hw = fixture("cpu-vm");
  hw.nvidia_driver = "550.54.14";
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("nvidia"));
  EXPECT_FALSE(l.only_rungs_in_build);
  EXPECT_THAT(names(l.rungs), ElementsAre("tensorrt", "cuda", "cpu"));
}

TEST(LadderTest, MacosIsCoreMl) {
  Hardware hw;
  hw.os = OsKind::kMacos;
  EXPECT_THAT(names(ladder_for(hw).rungs), ElementsAre("coreml", "cpu"));
}

TEST(LadderTest, CpuVmTriesOnlyTheAcceleratorsTheBuildCarries) {
  auto hw = fixture("cpu-vm");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("no-gpu-seen"));
  EXPECT_TRUE(l.only_rungs_in_build);
  EXPECT_THAT(names(l.for_build(kCpuBuild)), ElementsAre("cpu"));
  // The 1.30.0 npm build carries TensorRT, CUDA and WebGPU: the probe tries each.
  EXPECT_THAT(names(l.for_build({"TensorrtExecutionProvider", "CUDAExecutionProvider", "WebGpuExecutionProvider",
                                 "CPUExecutionProvider"})),
              ElementsAre("tensorrt", "cuda", "webgpu", "cpu"));
  // Nothing fits a GPU-less machine better than the CPU: the first build in search order wins.
  EXPECT_EQ(choice(hw), "cpu");
}

// Windows: onnxruntime-node's win32 build carries DirectML, WebGPU and the CPU.
const std::vector<std::string> kWindowsBuild = {"DmlExecutionProvider", "WebGpuExecutionProvider", "CPUExecutionProvider"};

TEST(LadderTest, WindowsLaptopWithNvidiaPutsTheVendorRungsFirstThenDirectMlThenWebGpu) {
  auto hw = fixture("windows-nvidia-laptop");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("nvidia", "intel-gpu", "windows-directx"));
  EXPECT_THAT(names(l.rungs), ElementsAre("tensorrt", "cuda", "openvino", "directml", "webgpu", "cpu"));
  EXPECT_FALSE(l.only_rungs_in_build);
  const RungSpec& dml = l.rungs[3];
  EXPECT_EQ(dml.display, "DirectML");
  EXPECT_EQ(dml.provider, "DmlExecutionProvider");
  EXPECT_EQ(dml.append, AppendMethod::kKeyValue);
  EXPECT_TRUE(dml.provider_libraries.empty());  // inside onnxruntime.dll
  EXPECT_FALSE(dml.compiles_engines);
  // A CUDA build fits the NVIDIA card best; without one the DirectML build beats the CPU's.
  std::vector<RuntimeBuild> shelf = {build("cpu", kCpuBuild, hw), build("win", kWindowsBuild, hw), build("cuda", kCudaBuild, hw)};
  EXPECT_EQ(shelf[*choose_build(shelf)].version, "cuda");
  shelf.pop_back();
  EXPECT_EQ(shelf[*choose_build(shelf)].version, "win");
}

TEST(LadderTest, WindowsAmdIsDirectMlThenWebGpuNeverRocm) {
  auto hw = fixture("windows-amd-desktop");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("windows-directx"));
  EXPECT_THAT(names(l.rungs), ElementsAre("directml", "webgpu", "cpu"));
  EXPECT_EQ(l.describe(), "DirectML -> WebGPU -> CPU");
  std::vector<RuntimeBuild> shelf = {build("cpu", kCpuBuild, hw), build("rocm", kRocmBuild, hw), build("win", kWindowsBuild, hw)};
  EXPECT_EQ(shelf[*choose_build(shelf)].version, "win");
}

TEST(LadderTest, WindowsWithOnlyTheSoftwareAdapterTriesWhatTheBuildCarries) {
  auto hw = fixture("windows-no-gpu");
  auto l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("no-gpu-seen"));
  EXPECT_TRUE(l.only_rungs_in_build);
  EXPECT_THAT(names(l.for_build(kWindowsBuild)), ElementsAre("directml", "webgpu", "cpu"));
  EXPECT_THAT(names(l.for_build(kCpuBuild)), ElementsAre("cpu"));
}

TEST(LadderTest, DirectMlIsNeverOnALinuxLadder) {
  // (A machine with no GPU seen tries whatever its build carries, DirectML in a Windows build included.)
  for (const char* name : {"nvidia-desktop", "amd-rocm-desktop", "intel-laptop-nvidia", "rockchip-rk3588-mali", "qualcomm-rb3-gen2"}) {
    auto rungs = names(ladder_for(fixture(name)).for_build(kWindowsBuild));
    EXPECT_THAT(rungs, Not(Contains("directml"))) << name << ": the build has no DirectML, or the platform is not Windows";
  }
  auto amd = fixture("amd-rocm-desktop");
  amd.rocm_kfd = false;
  EXPECT_THAT(names(ladder_for(amd).rungs), Not(Contains("directml")));
}

TEST(BuildChoiceTest, ScoresFollowTheFitOrder) {
  auto nvidia = fixture("nvidia-desktop");
  auto intel = fixture("intel-laptop-nvidia");
  intel.gpus.erase(intel.gpus.begin() + 1);  // only the iGPU
  intel.nvidia_driver.reset();
  EXPECT_EQ(score_build(kCudaBuild, nvidia), 4);
  EXPECT_EQ(score_build(kOpenVinoBuild, intel), 3);
  EXPECT_EQ(score_build(kWebGpuBuild, fixture("amd-rocm-desktop")), 1);  // ROCm machine: WebGPU is not its ladder
  EXPECT_EQ(score_build(kCpuBuild, nvidia), 1);
  EXPECT_EQ(score_build(kRocmBuild, nvidia), 1);
  std::string reason;
  score_build(kCudaBuild, nvidia, &reason);
  EXPECT_EQ(reason, "TensorRT for the NVIDIA GPU");
}

TEST(BuildChoiceTest, EqualScoresKeepSearchOrderAndEnvironmentWinsOutright) {
  auto hw = fixture("nvidia-desktop");
  std::vector<RuntimeBuild> shelf = {build("first", kCpuBuild, hw), build("second", kCpuBuild, hw)};
  std::string reason;
  EXPECT_EQ(*choose_build(shelf, &reason), 0u);
  EXPECT_EQ(reason, "best fit (score 1: CPU only: no provider in it matches this device), first of equals in search order");
  shelf.push_back(build("cuda", kCudaBuild, hw));
  EXPECT_EQ(*choose_build(shelf), 2u);
  shelf.push_back(build("env-cpu", kCpuBuild, hw, SearchOrigin::kEnvironment));
  EXPECT_EQ(*choose_build(shelf, &reason), 3u);
  EXPECT_EQ(reason, "RUNG_ORT_DIR wins outright");
  shelf[3].loaded = false;
  EXPECT_EQ(*choose_build(shelf), 2u);
}

TEST(StandingTest, RealBuildReportsWhichProviderLibrariesAreMissing) {
  auto b = load_runtime_build(test::runtime_dir("1.30.0") / "libonnxruntime.so.1");
  ASSERT_TRUE(b) << b.error().message;
  auto standing_or = ladder_standing(ladder_for(fixture("nvidia-desktop")), *b);
  ASSERT_TRUE(standing_or) << standing_or.error().message;
  const auto& standing = *standing_or;
  ASSERT_EQ(standing.size(), 3u);
  EXPECT_FALSE(standing[0].ready);
  EXPECT_FALSE(standing[1].ready);
  EXPECT_TRUE(standing[2].ready);
  if (test::kFetched130CarriesGpuProviders) {
    EXPECT_TRUE(standing[0].provider_in_build);
    EXPECT_EQ(standing[0].note, "ONNX Runtime's TensorRT provider (libonnxruntime_providers_tensorrt.so) is not beside libonnxruntime.so.1");
    EXPECT_EQ(standing[1].note, "ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) is not beside libonnxruntime.so.1");
  } else {  // linux/arm64: the CPU alone
    EXPECT_FALSE(standing[0].provider_in_build);
    EXPECT_EQ(standing[0].note, "not in ONNX Runtime 1.30.0");
    EXPECT_EQ(standing[1].note, "not in ONNX Runtime 1.30.0");
  }
  auto amd = ladder_standing(ladder_for(fixture("amd-rocm-desktop")), *b);
  ASSERT_TRUE(amd);
  EXPECT_FALSE((*amd)[0].provider_in_build);
  EXPECT_EQ((*amd)[0].note, "not in ONNX Runtime 1.30.0");
}

// A rung is found by its id or its display name, in any case, and nothing else:
// not a prefix, not with a space added, not another rung's name.
TEST(KnownRungsTest, ARungIsItsIdOrDisplayNameInAnyCaseAndNothingLonger) {
  for (const auto& r : known_rungs()) {
    std::string upper = r.name, lower_display = r.display;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (auto& c : lower_display) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const std::string& named : {r.name, upper, r.display, lower_display}) {
      ASSERT_NE(find_rung(named), nullptr) << named;
      EXPECT_EQ(find_rung(named)->name, r.name) << named;
      EXPECT_EQ(canonical_rung_name(named), r.name) << named;
    }
    EXPECT_EQ(find_rung(r.name + " "), nullptr);
    EXPECT_EQ(find_rung(r.name.substr(0, r.name.size() - 1)), nullptr);
    EXPECT_EQ(find_rung(r.name + "x"), nullptr);
  }
  EXPECT_EQ(find_rung("QNN HTP")->name, "qnn-htp");
  EXPECT_EQ(find_rung("qnn htp")->name, "qnn-htp");
  EXPECT_EQ(find_rung(""), nullptr);
  EXPECT_EQ(canonical_rung_name("Rung_Sim_EP"), "Rung_Sim_EP") << "a name rung does not know is kept as given";
  EXPECT_TRUE(same_rung_name("Rung_Sim_EP", "rung_sim_ep"));
  EXPECT_FALSE(same_rung_name("rung_sim_ep", "rung_sim_ep2"));
  EXPECT_FALSE(same_rung_name("rung-sim-ep", "rung_sim_ep"));
  EXPECT_EQ(rung_id("TensorRT"), "tensorrt");
  EXPECT_EQ(rung_id("/opt/eps/librung_sim_ep.so"), "rung_sim_ep");
  EXPECT_EQ(unknown_rung_reason("TENSORRT"), "");
  EXPECT_EQ(unknown_rung_reason("/opt/eps/librung_sim_ep.so"), "");
  EXPECT_THAT(unknown_rung_reason("tensorrtx"), ::testing::StartsWith("no rung 'tensorrtx': rung's rungs are tensorrt, cuda, "));
}

TEST(KnownRungsTest, EveryPlatformNamesOnlyKnownRungs) {
  for (const auto& p : known_platforms()) {
    for (const auto& r : p.rungs) EXPECT_NE(find_rung(r), nullptr) << p.id << " names " << r;
  }
  EXPECT_EQ(known_rungs().back().name, "cpu");
}

}  // namespace
}  // namespace rung
