// XNNPACK, the rung added as one module (src/rungs/xnnpack.cpp): where ladders
// hold it, what its provider and session are told, and that ONNX Runtime knows
// the provider it names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "in_process_runtime.h"
#include "model_builder.h"
#include "rung/ladder.h"
#include "rung/runtime.h"
#include "rungs/module.h"
#include "session/session.h"
#include "test_support.h"

namespace rung {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

Hardware fixture(const std::string& name) { return detect_hardware(test::fixtures_dir() / "hardware" / name); }

std::vector<std::string> names(const std::vector<RungSpec>& rungs) {
  std::vector<std::string> out;
  for (const auto& r : rungs) out.push_back(r.name);
  return out;
}

const std::vector<std::string> kCpuBuild = {"CPUExecutionProvider"};
const std::vector<std::string> kArmBuild = {"XnnpackExecutionProvider", "CPUExecutionProvider"};

TEST(XnnpackRungTest, AnArmServerWithoutAGpuTriesItAboveTheFloorOnlyWhereTheBuildCarriesIt) {
  const Hardware hw = fixture("ampere-altra");
  const Ladder l = ladder_for(hw);
  EXPECT_THAT(l.platforms, ElementsAre("no-gpu-seen"));
  EXPECT_THAT(names(l.for_build(kArmBuild)), ElementsAre("xnnpack", "cpu"));
  EXPECT_THAT(names(l.for_build(kCpuBuild)), ElementsAre("cpu")) << "a build without it is no failure to report";
  EXPECT_THAT(l.describe(), testing::EndsWith("XNNPACK -> CPU"));
}

TEST(XnnpackRungTest, OnAPlatformWithItsOwnRungsItComesBelowThemAllAndIsDroppedFromABuildWithoutIt) {
  const Ladder l = ladder_for(fixture("qualcomm-rb3-gen2"));  // Hexagon NPU and an Adreno GPU
  EXPECT_THAT(names(l.rungs), ElementsAre("qnn-htp", "webgpu", "xnnpack", "cpu"));
  // Other rungs a build lacks stay on this ladder (refused, with the reason): XNNPACK alone is dropped.
  EXPECT_THAT(names(l.for_build(kCpuBuild)), ElementsAre("qnn-htp", "webgpu", "cpu"));
}

TEST(XnnpackRungTest, AnX86CpuNeverHoldsIt) {
  for (const char* device : {"cpu-vm", "nvidia-desktop", "intel-laptop-nvidia", "amd-rocm-desktop", "windows-no-gpu"}) {
    EXPECT_THAT(names(ladder_for(fixture(device)).for_build(kArmBuild)), Not(testing::Contains("xnnpack"))) << device;
  }
}

TEST(XnnpackRungTest, ItNeedsAnArmCpuWithNeonAndEachFlagAloneIsEnough) {
  const RungModule& m = *module_of(*find_rung("xnnpack"));
  ASSERT_NE(m.needs, nullptr);
  Hardware hw;
  EXPECT_FALSE(m.needs(hw)) << "no flags read";
  hw.cpu.flags = {"fpu", "sse2", "avx2"};
  EXPECT_FALSE(m.needs(hw));
  hw.cpu.flags = {"asimd"};  // AArch64's Features line
  EXPECT_TRUE(m.needs(hw));
  hw.cpu.flags = {"neon"};  // 32-bit Arm's
  EXPECT_TRUE(m.needs(hw));
  hw.cpu.flags = {"asimddp"};  // a longer flag is not the one asked for
  EXPECT_FALSE(m.needs(hw));
}

TEST(XnnpackRungTest, ItsOwnPoolGetsTheSessionsThreadsAndNothingWhenNoneAreSet) {
  const RungSpec& x = *find_rung("XNNPACK");
  EXPECT_EQ(x.name, "xnnpack");
  EXPECT_EQ(x.provider, "XnnpackExecutionProvider");
  EXPECT_EQ(x.form, ModelForm::kF32);
  EXPECT_TRUE(x.provider_libraries.empty()) << "inside libonnxruntime, as the phone and board builds have it";
  ProviderSettings s;
  EXPECT_THAT(provider_option_map(x, s), IsEmpty());
  s.threads = 4;
  EXPECT_THAT(provider_option_map(x, s), UnorderedElementsAre(Pair("intra_op_num_threads", "4")));
  s.extra = {{"intra_op_num_threads", "2"}};
  EXPECT_THAT(provider_option_map(x, s), UnorderedElementsAre(Pair("intra_op_num_threads", "2"))) << "an override wins";
  EXPECT_TRUE(module_of(x)->quirks.owns_thread_pool);
  EXPECT_TRUE(run_option_map(x).empty());
}

TEST(XnnpackRungTest, ABuildCarryingItFitsNoPlatformByIt) {
  // A QNN device's best build is one with QNN; XNNPACK, which every Arm device may take, scores nothing.
  std::string why;
  EXPECT_EQ(score_build(kArmBuild, fixture("qualcomm-tablet"), &why), 1) << why;
  EXPECT_EQ(score_build({"QNNExecutionProvider", "CPUExecutionProvider"}, fixture("qualcomm-tablet"), &why), 4) << why;
}

// ONNX Runtime's own answer to the provider this module names: the CPU build
// here does not carry XNNPACK, and says so of XNNPACK (an unknown name would be
// refused in other words).
TEST(XnnpackRungTest, OnnxRuntimeKnowsTheProviderItNamesAndThisBuildSaysItLacksIt) {
  auto process = test::install_runtime_1_30();
  ASSERT_TRUE(process) << process.error().message;
  EXPECT_FALSE((*process)->build().has_provider("XnnpackExecutionProvider"));
  const auto dir = test::make_temp_dir("xnnpack-rung");
  const auto model = test::write_elementwise_model(dir / "m.onnx", {1, 4});
  SessionSettings settings;
  settings.rung = *find_rung("xnnpack");
  settings.intra_op_threads = 2;
  auto session = open_session(**process, model, settings);
  ASSERT_FALSE(session);
  EXPECT_THAT(session.error().message, HasSubstr("XnnpackExecutionProvider execution provider is not supported in this build"));
  // The control: a provider name ONNX Runtime does not know is refused in other words.
  settings.rung.provider = "XnnpackExecutionProviderX";
  auto unknown = open_session(**process, model, settings);
  ASSERT_FALSE(unknown);
  EXPECT_THAT(unknown.error().message, Not(HasSubstr("not supported in this build")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rung
