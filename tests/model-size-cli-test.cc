// What a command costs grows in proportion to the model: a model with 10 000
// outputs is benched in seconds, not minutes (it took 7 minutes when outputs
// were matched name against name and the placement profile built the model a
// second time). Not in the aarch64 subset: ONNX Runtime alone takes seconds
// to build such a model natively, many times that under emulation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ModelSizeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-model-size");
    test::make_plugin_dir(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // x -> Relu -> y0 ... y{n-1}: every output its own node.
  fs::path wide_model(int outputs) {
    test::ModelBuilder m;
    m.input("x", {1, 4});
    for (int i = 0; i < outputs; ++i) {
      const std::string y = "y" + std::to_string(i);
      m.node("Relu", {"x"}, {y}).output(y, {1, 4});
    }
    return m.save(dir_ / "wide.onnx");
  }

  fs::path dir_;
};

// Each output is run, written, read back and compared across two rungs, and where the nodes ran is read from a profile of 10 000 nodes.
// The simulated accelerator is told to claim no node: it fuses each node it
// takes into a partition of its own, and ONNX Runtime's cost of building
// 10 000 partitions is ONNX Runtime's (minutes), not rung's. The deadline is a
// wall far above the seconds this takes, not a speed target.
TEST_F(ModelSizeCliTest, AModelWithTenThousandOutputsIsBenchedAndComparedOutputByOutput) {
  const fs::path model = wide_model(10'000);
  const fs::path record = dir_ / "wide.json";
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR RUNG_SIM_EP_OPS=Sqrt " + test::q(test::cli_path()) + " bench " +
                             test::q(model) +
                             " --ort-dir " + test::q(test::runtime_dir("1.30.0")) + " --hardware-root " +
                             test::q(test::fixtures_dir() / "hardware" / "cpu-vm") + " --plugin-dir " + test::q(dir_ / "plugins") +
                             " --warmup 1 --runs 3 --rung rung_sim_ep --deadline 240 --out-json " + test::q(record));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Every output compared: one missing, or read back in the wrong order, is a mismatch.
  EXPECT_THAT(r.out, HasSubstr("match (max abs 0)"));
  // Every node placed, counted once each from the profile of one more run.
  EXPECT_THAT(r.out, HasSubstr("CPUExecutionProvider ran 10000 nodes"));
  auto j = nlohmann::json::parse(test::read_file(record));
  EXPECT_EQ(j["measurements"].size(), 1u);
}

}  // namespace
}  // namespace rung
