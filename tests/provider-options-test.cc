// The options each provider is given, including those that cannot run here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rungs/provider_settings.h"

namespace rung {
namespace {
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(ProviderOptionsTest, TensorRtGetsFp16PerRoleCachesAndAWorkspaceCap) {
  ProviderSettings s;
  s.engine_cache_dir = "/cache/engines/ab12/fp16/provider";
  s.fp16 = true;
  auto o = provider_option_map(*find_rung("tensorrt"), s);
  EXPECT_THAT(o, UnorderedElementsAre(Pair("trt_fp16_enable", "1"), Pair("trt_max_workspace_size", "536870912"),
                                      Pair("trt_engine_cache_enable", "1"),
                                      Pair("trt_engine_cache_path", "/cache/engines/ab12/fp16/provider"),
                                      Pair("trt_timing_cache_enable", "1"),
                                      Pair("trt_timing_cache_path", "/cache/engines/ab12/fp16/provider")));
  s.fp16 = false;  // an embedder
  s.trt_workspace_bytes = std::size_t{256} << 20;
  o = provider_option_map(*find_rung("tensorrt"), s);
  EXPECT_EQ(o.at("trt_fp16_enable"), "0");
  EXPECT_EQ(o.at("trt_max_workspace_size"), "268435456");
}

TEST(ProviderOptionsTest, MigraphxGetsItsCacheDirectoryThroughKeyValueOnePerPrecision) {
  ProviderSettings f32, fp16;
  f32.engine_cache_dir = "/cache/engines/ab12/f32/provider";
  fp16.engine_cache_dir = "/cache/engines/ab12/fp16/provider";
  fp16.fp16 = true;
  const RungSpec& migraphx = *find_rung("migraphx");
  EXPECT_EQ(migraphx.append, AppendMethod::kKeyValue);
  auto a = provider_option_map(migraphx, f32), b = provider_option_map(migraphx, fp16);
  EXPECT_EQ(a.at("migraphx_fp16_enable"), "0");
  EXPECT_EQ(b.at("migraphx_fp16_enable"), "1");
  // MIGraphX leaves precision out of its own cache key: the directories must differ.
  EXPECT_NE(a.at("migraphx_model_cache_dir"), b.at("migraphx_model_cache_dir"));
}

TEST(ProviderOptionsTest, OpenVinoGetsDeviceTypePrecisionAndCache) {
  ProviderSettings s;
  s.engine_cache_dir = "/c";
  s.fp16 = true;
  EXPECT_THAT(provider_option_map(*find_rung("openvino"), s),
              UnorderedElementsAre(Pair("device_type", "GPU"), Pair("precision", "FP16"), Pair("cache_dir", "/c")));
}

TEST(ProviderOptionsTest, QnnUsesTheHtpBackendAndBurstsOnlyForAJobsRuns) {
  ProviderSettings s;
  auto o = provider_option_map(*find_rung("qnn-htp"), s);
  EXPECT_EQ(o.at("backend_path"), "libQnnHtp.so");
  EXPECT_EQ(o.at("htp_performance_mode"), "default");
  EXPECT_THAT(run_option_map(*find_rung("qnn-htp")),
              UnorderedElementsAre(Pair("qnn.htp_perf_mode", "burst"), Pair("qnn.htp_perf_mode_post_run", "default")));
  EXPECT_TRUE(run_option_map(*find_rung("cuda")).empty());
}

TEST(ProviderOptionsTest, CoreMlAndWebGpuAndCpu) {
  ProviderSettings s;
  s.engine_cache_dir = "/c";
  EXPECT_THAT(provider_option_map(*find_rung("coreml"), s),
              UnorderedElementsAre(Pair("ModelFormat", "MLProgram"), Pair("ModelCacheDirectory", "/c")));
  EXPECT_TRUE(provider_option_map(*find_rung("webgpu"), s).empty());
  EXPECT_TRUE(provider_option_map(*find_rung("cpu"), s).empty());
  EXPECT_EQ(provider_option_map(*find_rung("cuda"), s).at("device_id"), "0");
}

TEST(ProviderOptionsTest, DirectMlTakesTheFastestGpuNeverAnNpu) {
  ProviderSettings s;
  s.engine_cache_dir = "/c";  // DirectML compiles nothing to keep
  EXPECT_THAT(provider_option_map(*find_rung("directml"), s),
              UnorderedElementsAre(Pair("performance_preference", "high_performance"), Pair("device_filter", "gpu")));
  EXPECT_TRUE(run_option_map(*find_rung("directml")).empty());
}

TEST(ProviderOptionsTest, ExtraOptionsPassThroughAndWin) {
  ProviderSettings s;
  s.extra = {{"perturb", "0.5"}, {"device_type", "NPU"}};
  auto o = provider_option_map(*find_rung("openvino"), s);
  EXPECT_EQ(o.at("device_type"), "NPU");
  EXPECT_EQ(o.at("perturb"), "0.5");
}

}  // namespace
}  // namespace rung
