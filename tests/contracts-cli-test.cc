// What the README promises, held to through the real CLI and the engine: a
// bench record of another model is refused before anything is measured (exit
// 2); input errors exit 2 in every command; an unusable RUNG_ORT_DIR is an
// error naming it (exit 3), never a silent switch to another build; input-spec
// keys the model does not have are refused naming the key; tensors above the
// limit are refused naming the input and its size; parity's random inputs are
// made one at a time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/engine_core.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class ContractsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-contracts");
    test::write_elementwise_model(dir_ / "a.onnx", {1, 8, 16});
    test::ModelBuilder b;
    b.input("x", {1, -1, -1}).node("Relu", {"x"}, {"y"}).output("y", {1, -1, -1});
    b.save(dir_ / "dyn.onnx");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string rung(const std::string& args, const std::string& env = "env -u RUNG_ORT_DIR") const {
    return env + " '" + test::cli_path().string() + "' " + args;
  }
  std::string here() const {
    return " --ort-dir " + test::runtime_dir("1.30.0").string() + " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string();
  }
  fs::path spec(const std::string& json) const {
    test::write_text(dir_ / "spec.json", json);
    return dir_ / "spec.json";
  }
  fs::path model_with_input(const std::string& name, test::ElemType type) const {
    test::ModelBuilder b;
    b.input("x", {2}, type).node("Identity", {"x"}, {"y"}).output("y", {2}, type);
    return b.save(dir_ / (name + ".onnx"));
  }

  fs::path dir_;
};

TEST_F(ContractsTest, BenchRefusesARecordOfAnotherModelBeforeMeasuring) {
  auto first = test::run_command(rung("bench a=" + (dir_ / "a.onnx").string() + " --rung cpu --runs 1 --out-json " + (dir_ / "r.json").string() + here()));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string record = test::read_file(dir_ / "r.json");
  auto other = test::run_command(rung("bench a=" + (dir_ / "dyn.onnx").string() + " --rung cpu --runs 1 --out-json " + (dir_ / "r.json").string() + here()));
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_THAT(other.err, HasSubstr("the existing record is of another model file (a.onnx"));
  EXPECT_THAT(other.out, Not(HasSubstr("CPU (floor)"))) << "it measured first";
  EXPECT_EQ(test::read_file(dir_ / "r.json"), record);
}

TEST_F(ContractsTest, AnInputFileOfAnUnsupportedTypeIsAnInputError) {
  const auto model = model_with_input("f32", test::ElemType::Float);
  fs::create_directories(dir_ / "in");
  // A TensorProto of complex64 (data type 14), written by hand: rung reads no complex type.
  const std::string pb = std::string("\x08\x02\x10\x0e\x42\x01x\x4a\x10", 9) + std::string(16, '\x01');
  test::write_text(dir_ / "in" / "x.pb", pb);
  auto r = test::parity("--ref " + test::side(model) + " --cand " + test::side(model) + " --inputs " + (dir_ / "in").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr((dir_ / "in" / "x.pb").string() + ": tensor 'x' holds complex64, which rung does not read"));
}

// An unusable RUNG_ORT_DIR: a file named like the library that is not one.
class OrtDirTest : public ContractsTest {
 protected:
  void SetUp() override {
    ContractsTest::SetUp();
    fs::create_directories(dir_ / "ort");
    test::write_text(dir_ / "ort" / "libonnxruntime.so.1", "not a library");
  }
  std::string env() const { return "env RUNG_ORT_DIR=" + (dir_ / "ort").string(); }
};

TEST_F(OrtDirTest, EveryCommandFailsNamingTheDirectoryNeverUsingAnotherBuild) {
  const std::string model = (dir_ / "a.onnx").string();
  const std::string hw = " --hardware-root " + (test::fixtures_dir() / "hardware" / "cpu-vm").string();
  for (const std::string& command :
       {"doctor" + hw, "probe --model a=" + model + " --cache-dir " + (dir_ / "cache").string() + hw,
        "prepare --model a=" + model + " --cache-dir " + (dir_ / "cache").string() + hw, "bench " + model + " --rung cpu --runs 1" + hw,
        "parity --ref " + model + " --cand " + model + " --random 1"}) {
    auto r = test::run_command(rung(command, env()));
    EXPECT_EQ(r.exit_code, 3) << command << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("RUNG_ORT_DIR " + (dir_ / "ort").string())) << command;
    EXPECT_THAT(r.err, HasSubstr("not loadable")) << command;
  }
}

TEST_F(OrtDirTest, EngineStartFailsNamingTheDirectory) {
  test::ScopedEnv ort("RUNG_ORT_DIR", (dir_ / "ort").c_str());
  core::EngineOptions o;
  o.cache_dir = dir_ / "cache";
  o.models = {{"a", Role::kGeneric, dir_ / "a.onnx", {}, {}, {}}};
  o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
  o.worker = test::worker_path();
  auto e = core::Engine::start(o);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.error().message, HasSubstr("RUNG_ORT_DIR " + (dir_ / "ort").string()));
  EXPECT_THAT(e.error().message, HasSubstr("not loadable"));
}

TEST_F(OrtDirTest, AnEmptyDirectoryIsUnusableToo) {
  fs::remove(dir_ / "ort" / "libonnxruntime.so.1");
  auto r = test::run_command(rung("doctor", env()));
  // A setting that names nothing loadable is "no runtime" (runtime-test's BadEnvCase), never another build.
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("RUNG_ORT_DIR=" + (dir_ / "ort").string() + " holds no libonnxruntime.so"));
}

// Spec keys the model does not have, through each command that takes a spec.
class SpecKeyTest : public ContractsTest, public ::testing::WithParamInterface<std::pair<std::string, std::string>> {};

TEST_P(SpecKeyTest, IsRefusedNamingTheKeyInEveryCommand) {
  const auto [json, said] = GetParam();
  const fs::path file = spec(json);
  const std::string model = (dir_ / "dyn.onnx").string();
  auto probe = test::run_command(rung("probe --model dyn=" + model + " --input-spec dyn=" + file.string() + " --cache-dir " +
                                      (dir_ / "cache").string() + here()));
  EXPECT_EQ(probe.exit_code, 2) << probe.out << probe.err;
  EXPECT_THAT(probe.err, HasSubstr(said)) << "probe";
  auto bench = test::run_command(rung("bench dyn=" + model + " --input-spec dyn=" + file.string() + " --rung cpu --runs 1" + here()));
  EXPECT_EQ(bench.exit_code, 2) << bench.out << bench.err;
  EXPECT_THAT(bench.err, HasSubstr(said)) << "bench";
  test::write_text(dir_ / "gate.json", R"({"inputs": )" + json + R"(, "gates": [{"decoder": "tensor"}]})");
  auto parity = test::parity("--ref " + test::side(dir_ / "dyn.onnx") + " --cand " + test::side(dir_ / "dyn.onnx") + " --random 1 --gate " +
                             (dir_ / "gate.json").string());
  EXPECT_EQ(parity.exit_code, 2) << parity.out << parity.err;
  EXPECT_THAT(parity.err, HasSubstr(said)) << "parity";
}

INSTANTIATE_TEST_SUITE_P(
    Keys, SpecKeyTest,
    ::testing::Values(std::make_pair(R"({"dims": {"x:99": 4}})", "dims key 'x:99': input 'x' has 3 axes"),
                      std::make_pair(R"({"dims": {"x:abc": 4}})", "key 'x:abc' is neither a dimension's name nor INPUT:AXIS"),
                      std::make_pair(R"({"dims": {"x:1": 1.5}})", "dims.x:1 must be a positive whole number, not 1.5"),
                      std::make_pair(R"({"dims": {"q:1": 4}})", "dims key 'q:1' names input 'q', which the model does not have"),
                      std::make_pair(R"({"values": {"q": [1]}})", "values key 'q' is not an input of the model")));

TEST_F(ContractsTest, ATensorAboveTheLimitIsRefusedNamingTheInputAndItsSize) {
  const fs::path file = spec(R"({"dims": {"x:1": 30000, "x:2": 30000}})");
  const std::string model = (dir_ / "dyn.onnx").string();
  const std::string said = "input 'x': float32 [1, 30000, 30000] would take 3.4 GiB, above the limit of 1.0 GiB for one tensor";
  auto probe = test::run_command(rung("probe --model dyn=" + model + " --input-spec dyn=" + file.string() + " --cache-dir " +
                                      (dir_ / "cache").string() + here()));
  EXPECT_EQ(probe.exit_code, 2) << probe.out << probe.err;
  EXPECT_THAT(probe.err, HasSubstr(said));
  auto bench = test::run_command(rung("bench dyn=" + model + " --input-spec dyn=" + file.string() + " --rung cpu --runs 1" + here()));
  EXPECT_EQ(bench.exit_code, 2) << bench.out << bench.err;
  EXPECT_THAT(bench.err, HasSubstr(said));
  // A gate file's absurd dims, in the parent process.
  test::write_text(dir_ / "gate.json", R"({"inputs": {"dims": {"x:1": 100000000000, "x:2": 100000000000}}, "gates": [{"decoder": "tensor"}]})");
  auto parity = test::parity("--ref " + test::side(dir_ / "dyn.onnx") + " --cand " + test::side(dir_ / "dyn.onnx") + " --random 1 --gate " +
                             (dir_ / "gate.json").string());
  EXPECT_EQ(parity.exit_code, 2) << parity.out << parity.err;
  EXPECT_THAT(parity.err, HasSubstr("input 'x': shape [1, 100000000000, 100000000000] has more than 2^63 elements"));
  // The limit is an option: lowered, a small tensor is refused; the default takes it.
  const fs::path small = spec(R"({"dims": {"x:1": 600, "x:2": 600}})");
  auto lowered = test::run_command(rung("bench dyn=" + model + " --input-spec dyn=" + small.string() + " --rung cpu --runs 1 --max-tensor-mb 1" + here()));
  EXPECT_EQ(lowered.exit_code, 2) << lowered.err;
  EXPECT_THAT(lowered.err, HasSubstr("input 'x': float32 [1, 600, 600] would take 1.4 MiB, above the limit of 1.0 MiB"));
  auto fits = test::run_command(rung("bench dyn=" + model + " --input-spec dyn=" + small.string() + " --rung cpu --runs 1" + here()));
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
}

TEST_F(ContractsTest, ParityMakesRandomInputsOneAtATime) {
  // A million inputs of 1 MiB each under a 4 GiB address-space limit: made up
  // front they exhaust it at once; made one at a time the first runs, and the
  // candidate failing it ends the run (exit 1) naming that input.
  const std::string dyn = (dir_ / "dyn.onnx").string();
  auto r = test::run_command("ulimit -v 4000000; RUNG_SIM_EP_FAIL_AT=compute " +
                             rung("parity --ref " + test::side(dyn) + " --cand " + test::sim_ep_side(dyn) + " --input-spec dyn=" +
                                  spec(R"({"dims": {"x:1": 512, "x:2": 512}})").string() + " --random 1000000"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("input random 0 failed to run"));
}

}  // namespace
}  // namespace rung
