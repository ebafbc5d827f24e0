// A library that passes every file check and still is no usable ONNX Runtime:
// its OrtGetApiBase hands back nothing, a table without functions, or a GetApi
// that serves no version (tests/fake-libraries). Every command that loads a
// runtime says which and why, exit 3, and the engine refuses to start; none
// calls through the damaged table (which would be a SIGSEGV).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "rung/engine_core.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Damage {
  const char* dir;   // under the fake libraries' build directory
  const char* says;  // what the error must say about it
};

const Damage kDamages[] = {
    {"ort-null-base", "OrtGetApiBase returned no API table"},
    {"ort-empty-base", "its API table has no GetApi"},
    {"ort-no-api", "serves no API version"},
};

class DamagedRuntimeTest : public ::testing::TestWithParam<Damage> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-damaged-runtime");
    test::write_elementwise_model(dir_ / "a.onnx", {1, 4});
    ort_ = test::fake_libraries_dir() / GetParam().dir;
  }
  void TearDown() override { fs::remove_all(dir_); }

  test::CommandResult rung(const std::string& args) const {
    return test::run_command("env -u RUNG_PLUGIN_DIR RUNG_ORT_DIR=" + ort_.string() + " '" + test::cli_path().string() + "' " + args);
  }

  fs::path dir_, ort_;
};

TEST_P(DamagedRuntimeTest, EveryCommandSaysWhichBuildAndWhyWithExit3) {
  const std::string model = (dir_ / "a.onnx").string();
  const std::string hw = " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string();
  const std::string cache = " --cache-dir " + (dir_ / "cache").string();
  for (const std::string& command : {"doctor" + hw, "probe --model a=" + model + cache + hw, "prepare --model a=" + model + cache + hw,
                                     "bench " + model + " --rung cpu --runs 1" + hw, "parity --ref " + model + " --cand " + model + " --random 1"}) {
    auto r = rung(command);
    EXPECT_EQ(r.exit_code, 3) << command << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(GetParam().says)) << command;
    EXPECT_THAT(r.err, HasSubstr((ort_ / "libonnxruntime.so.1").string())) << command;
  }
}

TEST_P(DamagedRuntimeTest, TheEngineRefusesToStart) {
  test::ScopedEnv ort("RUNG_ORT_DIR", ort_.c_str());
  core::EngineOptions o;
  o.cache_dir = dir_ / "cache";
  o.models = {{"a", Role::kGeneric, dir_ / "a.onnx", {}, {}, {}}};
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  o.worker = test::worker_path();
  auto e = core::Engine::start(o);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.error().message, HasSubstr(GetParam().says));
}

INSTANTIATE_TEST_SUITE_P(EachDamage, DamagedRuntimeTest, ::testing::ValuesIn(kDamages),
                         [](const auto& param_info) {
                           std::string name = param_info.param.dir;
                           for (auto& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace rung
