// Every command ends with the same exit code for the same class of outcome:
// 0 yes, 1 the answer is no, 2 a usage or input error, 3 no usable ONNX Runtime
// build. One table of commands, each driven as a user drives it into each class;
// and the shared runtime options (--ort-dir, --allow-writable-runtime) on all.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "model_builder.h"
#include "session/tensor_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Command {
  const char* name;
  // The arguments that take the command as far as finding a runtime build, on `model` with its cache in `dir`.
  std::string (*args)(const fs::path& model, const fs::path& dir);
};

std::string cpu_vm() { return (test::fixtures_dir() / "hardware" / "cpu-vm").string(); }

const Command kCommands[] = {
    {"doctor", [](const fs::path&, const fs::path&) { return std::string("doctor --hardware-root ") + cpu_vm(); }},
    {"probe",
     [](const fs::path& m, const fs::path& d) {
       return "probe --in-process --model tiny=" + m.string() + " --cache-dir " + (d / "cache").string() + " --hardware-root " + cpu_vm();
     }},
    {"prepare",
     [](const fs::path& m, const fs::path& d) {
       return "prepare --in-process --model tiny=" + m.string() + " --cache-dir " + (d / "cache").string() + " --hardware-root " + cpu_vm();
     }},
    {"bench", [](const fs::path& m, const fs::path&) { return "bench tiny=" + m.string() + " --rung cpu --runs 1 --warmup 0 --hardware-root " + cpu_vm(); }},
    {"parity", [](const fs::path& m, const fs::path&) { return "parity --ref " + m.string() + " --cand " + m.string() + " --random 1"; }},
    {"conform", [](const fs::path&, const fs::path& d) { return "conform --suite " + (d / "suite").string() + " --rung cpu"; }},
};

// The model as a conform suite of one test: zeros in, Relu(0 * 0.75 + 0.25 - 0) out.
void write_conform_suite(const fs::path& model, const fs::path& suite) {
  const fs::path test = suite / "test_tiny";
  fs::create_directories(test / "test_data_set_0");
  fs::copy_file(model, test / "model.onnx");
  auto filled = [](const char* name, float v) {
    Tensor t;
    t.name = name;
    t.type = ElementType::kFloat;
    t.shape = {1, 4, 8};
    t.bytes.resize(32 * sizeof(float));
    for (std::size_t i = 0; i < 32; ++i) std::memcpy(t.bytes.data() + i * sizeof(float), &v, sizeof v);
    return t;
  };
  ASSERT_TRUE(write_tensor_file(filled("x", 0.0f), test / "test_data_set_0" / "input_0.pb"));
  ASSERT_TRUE(write_tensor_file(filled("y", 0.25f), test / "test_data_set_0" / "output_0.pb"));
}

class ExitCodeCliTest : public ::testing::TestWithParam<Command> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-exit-code");
    model_ = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4, 8});
    write_conform_suite(model_, dir_ / "suite");
    // A copy of the CLI in a directory of its own has no runtimes/ beside it: it finds a build only where told.
    fs::create_directories(dir_ / "lonely");
    test::copy_cli_to(dir_ / "lonely");
    // A real build reached through a directory every user can write to: anyone could swap it.
    fs::create_directories(dir_ / "writable");
    fs::create_symlink(test::runtime_dir("1.30.0") / "libonnxruntime.so.1", dir_ / "writable" / "libonnxruntime.so.1");
    ::chmod((dir_ / "writable").c_str(), 0777);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The command, from `cli`, with its arguments and `extra`; the worker named, since a lonely CLI has none beside it.
  test::CommandResult run(const fs::path& cli, const std::string& extra) {
    return test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG RUNG_PROBE_WORKER='" +
                             test::worker_path().string() + "' '" + cli.string() + "' " + GetParam().args(model_, dir_) + " " + extra);
  }
  fs::path lonely() const { return dir_ / "lonely" / "rung"; }

  fs::path dir_;
  fs::path model_;
};

TEST_P(ExitCodeCliTest, RunsAndSucceedsOnTheBuildsBesideIt) {
  auto r = run(test::cli_path(), "");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_P(ExitCodeCliTest, AnUnknownOptionIsAUsageError) {
  auto r = run(test::cli_path(), "--no-such-option");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--no-such-option"));
}

TEST_P(ExitCodeCliTest, AnOrtDirThatIsNotThereIsAUsageError) {
  auto r = run(test::cli_path(), "--ort-dir " + (dir_ / "nowhere").string());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("the runtime directory=" + (dir_ / "nowhere").string() + ": does not exist"));
}

TEST_P(ExitCodeCliTest, NoBuildAnywhereIsNoUsableRuntime) {
  auto r = run(lonely(), "");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no usable ONNX Runtime build"));
}

TEST_P(ExitCodeCliTest, ABuildOthersCanWriteToIsRefusedUnlessAllowed) {
  const std::string ort_dir = "--ort-dir " + (dir_ / "writable").string();
  auto refused = run(lonely(), ort_dir);
  EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("is writable by other users"));
  auto allowed = run(lonely(), ort_dir + " --allow-writable-runtime");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, ExitCodeCliTest, ::testing::ValuesIn(kCommands),
                         [](const ::testing::TestParamInfo<Command>& param_info) { return std::string(param_info.param.name); });

// The answer "no" (1), for the commands that ask a question; doctor and bench report and do not judge.
class AnswerNoCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-answer-no");
    model_ = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4, 8});
    std::ofstream(dir_ / "notes.onnx") << "notes, not a model";
  }
  void TearDown() override { fs::remove_all(dir_); }

  test::CommandResult run(const std::string& args) {
    return test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR -u RUNG_FORCE_RUNG '" + test::cli_path().string() + "' " + args);
  }
  std::string models() const {
    return "--model tiny=" + model_.string() + " --model notes=" + (dir_ / "notes.onnx").string() + " --cache-dir " +
           (dir_ / "cache").string() + " --hardware-root " + cpu_vm() + " --in-process";
  }

  fs::path dir_;
  fs::path model_;
};

// A file the CPU cannot load is no "no" but an input error (2), as in bench (docs/cli.md's table).
TEST_F(AnswerNoCliTest, ProbeWithAModelTheFloorCannotLoadIsAnInputError) {
  auto r = run("probe " + models() + " --probe-model notes --probe-model tiny");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("model notes: the CPU floor cannot load"));
  // Not a model at all: other inputs would not help, so no input spec is suggested.
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Give it an input spec")));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("..")));
}

TEST_F(AnswerNoCliTest, PrepareWithAModelTheCpuCannotLoadIsAnInputError) {
  auto r = run("prepare " + models());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("notes"));
  EXPECT_THAT(r.err, HasSubstr("a model the CPU cannot load was given"));
}

TEST_F(AnswerNoCliTest, ParityWithACandidateThatComputesSomethingElse) {
  auto r = run("parity --ref " + model_.string() + " --cand '" + model_.string() + ",rung=" + test::sim_ep_path().string() +
               ",option.perturb=0.5' --random 1");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL"));
}

}  // namespace
}  // namespace rung
