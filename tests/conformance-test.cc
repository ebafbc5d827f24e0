// One conformance body over every ONNX Runtime build and every rung available
// here: a session on the rung runs the shared element-wise model and a real
// sample model, and its outputs must match the CPU rung of the main build at
// Tolerance::close(). WebGPU runs on the software adapter (lavapipe), lent to
// the workers as --software-gpu lends it. Each case runs in parity's worker processes, because one
// process can load only one ONNX Runtime build's sessions: this process never
// opens a session, so the builds never meet in it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <tuple>

#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/parity.h"
#include "rung/tolerance.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

constexpr const char* kMainBuild = "1.30.0";
// Plugin execution providers (the simulated accelerator) need the EP device entries of API 22.
constexpr int kPluginApi = 22;

enum class Rung { kCpu, kSimulated, kWebGpu };
enum class Model { kElementwise, kAngleClassifier };

void PrintTo(Rung r, std::ostream* os) { *os << (r == Rung::kCpu ? "cpu" : r == Rung::kSimulated ? "sim" : "webgpu"); }
void PrintTo(Model m, std::ostream* os) { *os << (m == Model::kElementwise ? "elementwise" : "ppocr_cls"); }

using Case = std::tuple<std::string, Rung, Model>;

// The build as discovery sees it, from its own directory only.
Result<RuntimeBuild> build_named(const std::string& version) {
  RuntimeSearchOptions only;
  only.explicit_dir = test::runtime_dir(version);
  only.include_default_locations = false;
  only.read_environment = false;
  auto d = discover_runtimes(only, Hardware{});
  if (!d) return d.error();
  return *d->chosen_build();
}

class ConformanceTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-conformance"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path model(Model m) {
    if (m == Model::kElementwise) return test::write_elementwise_model(dir_ / "elementwise.onnx", {1, 64, 256});
    return test::model_path("ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx");
  }

  // The tensor gate at the named tolerance, on every output.
  fs::path gate_at(const Tolerance& t) {
    const fs::path p = dir_ / "gate.json";
    nlohmann::json gate = {{"gates", {{{"decoder", "tensor"}, {"atol", t.atol}, {"rtol", t.rtol}}}}};
    test::write_text(p, gate.dump());
    return p;
  }

  fs::path dir_;
};

TEST_P(ConformanceTest, MatchesTheCpuRungAtTheCloseTolerance) {
  const auto& [version, rung, which] = GetParam();
  auto build = build_named(version);
  ASSERT_TRUE(build) << "ONNX Runtime " << version << " is missing (tools/fetch-deps.sh fetches it): " << build.error().message;
  std::string rung_spec = "cpu";
  std::optional<test::LentSoftwareGpu> lavapipe;
  if (rung == Rung::kSimulated) {
    if (build->api_version < kPluginApi) {
      GTEST_SKIP() << "ONNX Runtime " << version << " serves API " << build->api_version << "; plugin execution providers need " << kPluginApi;
    }
    rung_spec = test::sim_ep_path().string();
  } else if (rung == Rung::kWebGpu) {
    if (!build->has_provider("WebGpuExecutionProvider")) GTEST_SKIP() << "ONNX Runtime " << version << " does not carry WebGPU";
    lavapipe.emplace();
    if (!lavapipe->skip_reason().empty()) GTEST_SKIP() << lavapipe->skip_reason();
    rung_spec = "webgpu";
  }
  const fs::path file = model(which);
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: tools/fetch-deps.sh fetches the sample models";

  ParityOptions o;
  o.ref = {file, {}, test::runtime_dir(kMainBuild).string(), "cpu", 0, {}};
  o.cand = {file, {}, test::runtime_dir(version).string(), rung_spec, 0, {}};
  o.random = 2;
  o.seed = 11;
  o.gate_file = gate_at(Tolerance::close());
  o.runtimes.include_default_locations = false;
  o.runtimes.read_environment = false;
  o.worker = test::worker_path();
  o.work_dir = dir_ / "work";
  auto report = run_parity(o);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->gates.size(), 1u);
  const GateOutcome& tensor = report->gates[0];
  EXPECT_TRUE(tensor.passed) << report->cand << "\n" << report->text();
  EXPECT_EQ(report->inputs, 2u);
  // The case ran where it says: this build, and the rung by its display name.
  EXPECT_THAT(report->cand, ::testing::HasSubstr(" · ONNX Runtime " + build->version + " ("));
  if (rung == Rung::kSimulated) {
    EXPECT_THAT(report->cand, ::testing::HasSubstr(" · rung_sim_ep · "));
  }
  if (rung == Rung::kWebGpu) {
    EXPECT_THAT(report->cand, ::testing::HasSubstr("WebGPU on lavapipe (software)"));
    EXPECT_THAT(report->cand_run.placement, ::testing::HasSubstr("WebGpuExecutionProvider ran "));
  }
  const auto stats = nlohmann::json::parse(tensor.stats_json);
  EXPECT_EQ(stats["atol"].get<double>(), Tolerance::close().atol);
  EXPECT_EQ(stats["rtol"].get<double>(), Tolerance::close().rtol);
  EXPECT_EQ(stats["inputs_passed"].get<int>(), 2);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string v = std::get<0>(info.param);
  for (char& c : v) {
    if (c == '.') c = '_';
  }
  return "ort" + v + "_" + ::testing::PrintToString(std::get<1>(info.param)) + "_" + ::testing::PrintToString(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(EveryBuildEveryRung, ConformanceTest,
                         ::testing::Combine(::testing::Values("1.30.0", "1.29", "1.28.2"),
                                            ::testing::Values(Rung::kCpu, Rung::kSimulated, Rung::kWebGpu),
                                            ::testing::Values(Model::kElementwise, Model::kAngleClassifier)),
                         case_name);

}  // namespace
}  // namespace rung
