// `rung` is a front (cli/front.cpp): a warm `rung probe` is answered in it,
// without libonnx or ONNX's protobuf ever loaded; everything else, and a probe
// that must measure, runs in rung-full, which the front becomes with the same
// arguments, streams and exit code. Seen from outside, through the loader's own
// account of what it opened (LD_DEBUG=files), and against a front left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using test::q;

const char* kProtobufOrOnnx = R"(file=[^ ]*(libprotobuf|libonnx\.so|libonnx_proto)[^ ]*)";

class FrontCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-front"); }
  void TearDown() override { fs::remove_all(dir_); }

  std::string probe(const std::string& env = "", const std::string& extra = "") const {
    return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG " + env + " " + q(test::cli_path()) + " probe --cache-dir " + q(dir_ / "cache") + " --model ppocr_cls=" +
           q(test::model_path("ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx")) + " --runs 1 " + extra;
  }

  // The libraries the loader opened in each process of a command (its LD_DEBUG=files lines).
  static bool opened(const test::CommandResult& r, const char* pattern) { return std::regex_search(r.err, std::regex(pattern)); }

  fs::path dir_;
};

TEST_F(FrontCliTest, AWarmProbeIsAnsweredWithoutLoadingProtobufOrLibonnx) {
  auto cold = test::run_command(probe("LD_DEBUG=files"));
  ASSERT_EQ(cold.exit_code, 0) << cold.out << cold.err;
  // The cold probe measured: the front became rung-full, which links both.
  EXPECT_TRUE(opened(cold, kProtobufOrOnnx)) << "a cold probe runs in rung-full";
  EXPECT_THAT(cold.out, Not(HasSubstr("(from the cache")));

  auto warm = test::run_command(probe("LD_DEBUG=files"));
  ASSERT_EQ(warm.exit_code, 0) << warm.out << warm.err;
  EXPECT_THAT(warm.out, HasSubstr("(from the cache "));
  EXPECT_FALSE(opened(warm, kProtobufOrOnnx)) << warm.err.substr(0, 4000);
  EXPECT_FALSE(opened(warm, "file=[^ ]*rung-full")) << "the warm answer is the front's own";
  // It runs nothing: not even the build the cache names is opened (probe/launch.h).
  EXPECT_FALSE(opened(warm, "file=[^ ]*libonnxruntime")) << warm.err.substr(0, 4000);
  EXPECT_THAT(warm.out, HasSubstr("ONNX Runtime 1.30.0"));

  // The same table either way: one printing, whichever program answered.
  auto table = [](const std::string& out) { return out.substr(out.find("\n\n")); };
  EXPECT_EQ(table(warm.out), table(cold.out));
}

TEST_F(FrontCliTest, AReprobeOrAChangedSettingIsHandedToRungFull) {
  ASSERT_EQ(test::run_command(probe()).exit_code, 0);
  for (const std::string extra : {"--force", "--min-gain 0.06"}) {
    auto r = test::run_command(probe("LD_DEBUG=files", extra));
    ASSERT_EQ(r.exit_code, 0) << extra << r.out << r.err;
    EXPECT_TRUE(opened(r, kProtobufOrOnnx)) << extra << ": measured, in rung-full";
    EXPECT_THAT(r.out, Not(HasSubstr("(from the cache"))) << extra;
  }
}

// The record vouches for the build's file, not for what it needs outside it: a library
// the build needs that the loader would now stop at (here a junk librt.so.1 first on
// LD_LIBRARY_PATH) means the build is opened after all, and its failure said, not the
// cache's answer. Once the library is back, the cache answers again.
TEST_F(FrontCliTest, ABuildWhoseLibraryWentIsOpenedNotVouchedFor) {
  ASSERT_EQ(test::run_command(probe()).exit_code, 0);
  fs::create_directories(dir_ / "junk");
  std::ofstream(dir_ / "junk" / "librt.so.1") << "not a library";
  auto broken = test::run_command(probe("LD_LIBRARY_PATH=" + q(dir_ / "junk")));
  EXPECT_EQ(broken.exit_code, 3) << broken.out << broken.err;
  EXPECT_THAT(broken.err, HasSubstr((dir_ / "junk" / "librt.so.1").string()));
  EXPECT_THAT(broken.out, Not(HasSubstr("(from the cache")));
  auto back = test::run_command(probe());
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_THAT(back.out, HasSubstr("(from the cache "));
}

// What the front noticed before it handed over is said once, by rung-full.
TEST_F(FrontCliTest, ANoteBeforeTheHandOverIsSaidOnce) {
  fs::create_directories(dir_ / "cache");
  std::ofstream(dir_ / "cache" / "probe.json") << "{ not json";
  auto r = test::run_command(probe());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::occurrences(r.err, "ignored the cache"), 1u) << r.err;
}

// Every other command runs in rung-full with the front's arguments, and its exit code is the front's.
TEST_F(FrontCliTest, OtherCommandsHelpAndParseErrorsAreRungFullsWithItsExitCodes) {
  auto help = test::run_command(q(test::cli_path()) + " --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const std::string command : {"doctor", "probe", "prepare", "bench", "parity", "quantise", "conform", "registry", "variants"}) {
    EXPECT_THAT(help.out, HasSubstr("  " + command)) << command;
  }
  auto probe_help = test::run_command(q(test::cli_path()) + " probe --help");
  EXPECT_EQ(probe_help.exit_code, 0);
  EXPECT_THAT(probe_help.out, HasSubstr("--cache-dir"));

  auto unknown = test::run_command(q(test::cli_path()) + " probe --no-such-option");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("--no-such-option"));
  EXPECT_EQ(test::occurrences(unknown.err, "--no-such-option"), 1u) << "said by rung-full alone: " << unknown.err;

  auto missing = test::run_command(q(test::cli_path()) + " bench " + q(dir_ / "nope.onnx"));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr((dir_ / "nope.onnx").string()));

  auto version = test::run_command(q(test::cli_path()) + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, HasSubstr("ONNX Runtime builds:"));
}

// A front without rung-full beside it (nor installed) says so, naming the target, and answers a warm probe still.
TEST_F(FrontCliTest, AFrontWithoutRungFullSaysWhatIsMissing) {
  const fs::path alone = dir_ / "alone";
  fs::create_directories(alone);
  fs::copy_file(test::cli_path(), alone / "rung");
  auto r = test::run_command(q(alone / "rung") + " doctor");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("rung-full, which runs this command, is neither beside this program nor in "));
  EXPECT_THAT(r.err, HasSubstr("target rung_full"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace rung
