// An output never replaces an input: every command that writes files checks,
// before any work, that no output is one of its inputs (the same file by
// device and inode, so hard links and symbolic links count; a file in an input
// directory counts), that no two outputs are the same file, that no output is
// a directory or a device, and that its directory is there; otherwise exit 2
// naming both paths, with every input as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/output_paths.h"
#include "session/tensor_file.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::q;

// --- the check itself ------------------------------------------------------------------

class OutputPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-output-paths");
    test::write_text(dir_ / "model.onnx", "the model");
    fs::create_directories(dir_ / "set" / "deeper");
    test::write_text(dir_ / "set" / "deeper" / "img.png", "an image");
  }
  void TearDown() override { fs::remove_all(dir_); }

  Status check(const fs::path& out) const {
    return check_output_paths({{"--out", out}}, {{"the model", dir_ / "model.onnx"}, {"--calibration", dir_ / "set"}});
  }

  fs::path dir_;
};

TEST_F(OutputPathsTest, ANewFileOrAnExistingFileThatIsNoInputIsFine) {
  EXPECT_TRUE(check(dir_ / "q.onnx").ok());
  test::write_text(dir_ / "old.onnx", "an old output");
  EXPECT_TRUE(check(dir_ / "old.onnx").ok());
  EXPECT_TRUE(check(dir_ / "set2.onnx").ok()) << "a name that starts like an input directory's is not in it";
  EXPECT_TRUE(check_output_paths({{"--out", ""}}, {{"the model", dir_ / "model.onnx"}}).ok()) << "no output given";
}

TEST_F(OutputPathsTest, TheInputItselfALinkToItOrAHardLinkIsRefusedNamingBoth) {
  auto same = check(dir_ / "model.onnx");
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(same.error().message, HasSubstr("--out " + (dir_ / "model.onnx").string() + " is the model " + (dir_ / "model.onnx").string()));
  EXPECT_FALSE(check(dir_ / "." / "model.onnx").ok());
  fs::create_symlink(dir_ / "model.onnx", dir_ / "link.onnx");
  EXPECT_THAT(check(dir_ / "link.onnx").error().message, HasSubstr("is the model"));
  fs::create_hard_link(dir_ / "model.onnx", dir_ / "hard.onnx");
  EXPECT_THAT(check(dir_ / "hard.onnx").error().message, HasSubstr("--out " + (dir_ / "hard.onnx").string() + " is the model"));
}

TEST_F(OutputPathsTest, AFileInAnInputDirectoryIsRefusedUnderAnyName) {
  auto in_set = check(dir_ / "set" / "deeper" / "img.png");
  ASSERT_FALSE(in_set.ok());
  EXPECT_THAT(in_set.error().message, HasSubstr("in --calibration " + (dir_ / "set").string()));
  fs::create_hard_link(dir_ / "set" / "deeper" / "img.png", dir_ / "elsewhere.png");
  EXPECT_THAT(check(dir_ / "elsewhere.png").error().message, HasSubstr((dir_ / "set" / "deeper" / "img.png").string()));
}

// A file written into an input directory is read by the next run as one of its
// inputs: refused, new or not, however the directory is reached.
TEST_F(OutputPathsTest, AnyFileInsideAnInputDirectoryNewOrNotIsRefusedHoweverItIsReached) {
  const std::string set = (dir_ / "set").string();
  for (const fs::path& out : {dir_ / "set" / "new.onnx", dir_ / "set" / "deeper" / "new.onnx", dir_ / "set" / "deeper" / ".." / "new.onnx",
                              dir_ / "elsewhere" / ".." / "set" / "new.onnx"}) {
    if (out.string().find("elsewhere") != std::string::npos) fs::create_directories(dir_ / "elsewhere");
    auto s = check(out);
    ASSERT_FALSE(s.ok()) << out;
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(s.error().message, HasSubstr("--out " + out.string() + " is inside --calibration " + set)) << out;
  }
  // Through a symbolic link to the directory, or to a directory inside it.
  fs::create_directory_symlink(dir_ / "set", dir_ / "set-link");
  fs::create_directory_symlink(dir_ / "set" / "deeper", dir_ / "deeper-link");
  EXPECT_FALSE(check(dir_ / "set-link" / "new.onnx").ok());
  EXPECT_FALSE(check(dir_ / "deeper-link" / "new.onnx").ok());
  // An existing file there is one of the set's files: refused as the input it is.
  test::write_text(dir_ / "set" / "old.onnx", "an input now");
  EXPECT_THAT(check(dir_ / "set" / "old.onnx").error().message, HasSubstr("in --calibration " + set + " (the same file): it would be replaced"));
  // Beside the directory, above it, or in a sibling: fine.
  fs::create_directories(dir_ / "set2");
  EXPECT_TRUE(check(dir_ / "set2" / "new.onnx").ok());
  EXPECT_TRUE(check(dir_ / "new.onnx").ok());
  // A file input's directory is no input directory.
  EXPECT_TRUE(check_output_paths({{"--out", dir_ / "set" / "deeper" / "x.onnx"}}, {{"the image", dir_ / "set" / "deeper" / "img.png"}}).ok());
}

TEST_F(OutputPathsTest, TwoOutputsThatAreOneFileAreRefused) {
  auto twice = check_output_paths({{"--out", dir_ / "q.onnx"}, {"--report", dir_ / "q.onnx"}}, {});
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.error().message, HasSubstr("--out " + (dir_ / "q.onnx").string() + " and --report " + (dir_ / "q.onnx").string() + " name the same file"));
  EXPECT_FALSE(check_output_paths({{"--out", dir_ / "q.onnx"}, {"--report", dir_ / "set" / ".." / "q.onnx"}}, {}).ok());
  test::write_text(dir_ / "r.json", "{}");
  fs::create_hard_link(dir_ / "r.json", dir_ / "r2.json");
  EXPECT_FALSE(check_output_paths({{"--out", dir_ / "r.json"}, {"--report", dir_ / "r2.json"}}, {}).ok());
  EXPECT_TRUE(check_output_paths({{"--out", dir_ / "q.onnx"}, {"--report", dir_ / "q.report.json"}}, {}).ok());
}

TEST_F(OutputPathsTest, ADirectoryADeviceOrAMissingDirectoryIsRefused) {
  EXPECT_THAT(check(dir_ / "set").error().message, HasSubstr("--out " + (dir_ / "set").string() + " is a directory"));
  EXPECT_THAT(check("/dev/null").error().message, HasSubstr("is not a regular file"));
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_THAT(check(dir_ / "fifo").error().message, HasSubstr("is not a regular file"));
  EXPECT_THAT(check(dir_ / "missing" / "q.onnx").error().message, HasSubstr("the directory " + (dir_ / "missing").string() + " does not exist"));
  EXPECT_THAT(check(dir_ / "model.onnx" / "q.onnx").error().message, HasSubstr((dir_ / "model.onnx" / "q.onnx").string()));
}

TEST_F(OutputPathsTest, AnOutputWhoseDirectoriesAreMadeNeedsTheNearestOneThereToBeADirectory) {
  EXPECT_TRUE(check_output_paths({{"--json", dir_ / "new" / "deeper" / "r.json", true}}, {}).ok());
  EXPECT_FALSE(check_output_paths({{"--json", dir_ / "model.onnx" / "deeper" / "r.json", true}}, {}).ok());
}

TEST_F(OutputPathsTest, AFileWhereTheDirectoryShouldBeIsSaidAsSuch) {
  // Said as what it is, not as a permission: the file may well be writable.
  const std::string file = (dir_ / "model.onnx").string();
  EXPECT_THAT(check(dir_ / "model.onnx" / "q.onnx").error().message, HasSubstr(file + " is not a directory"));
  fs::permissions(dir_ / "model.onnx", fs::perms(0777));  // writable and executable: still no directory
  EXPECT_THAT(check(dir_ / "model.onnx" / "q.onnx").error().message, HasSubstr(file + " is not a directory"));
  fs::permissions(dir_ / "model.onnx", fs::perms(0644));
  EXPECT_THAT(check_output_paths({{"--json", dir_ / "model.onnx" / "deeper" / "r.json", true}}, {}).error().message,
              HasSubstr(file + " is not a directory"));
}

TEST_F(OutputPathsTest, ADirectoryNotWritableByTheUserIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  fs::create_directories(dir_ / "locked");
  fs::permissions(dir_ / "locked", fs::perms(0500));
  EXPECT_THAT(check(dir_ / "locked" / "q.onnx").error().message, HasSubstr("is not writable by you"));
  fs::permissions(dir_ / "locked", fs::perms(0700));
}

TEST_F(OutputPathsTest, ADirectoryWrittenInMayNotBeAFileNorBeOrBeInsideAnInputDirectory) {
  const std::vector<NamedPath> inputs = {{"--calibration", dir_ / "set"}};
  EXPECT_THAT(check_output_directory({"--work-dir", dir_ / "set"}, inputs).error().message,
              HasSubstr("--work-dir " + (dir_ / "set").string() + " is inside --calibration " + (dir_ / "set").string()));
  EXPECT_FALSE(check_output_directory({"--work-dir", dir_ / "set" / "deeper"}, inputs).ok());
  EXPECT_FALSE(check_output_directory({"--work-dir", dir_ / "set" / "not-yet"}, inputs).ok());
  EXPECT_TRUE(check_output_directory({"--work-dir", dir_ / "not-yet"}, inputs).ok());
  EXPECT_TRUE(check_output_directory({"--cache-dir", dir_ / "set"}).ok());
  EXPECT_TRUE(check_output_directory({"--cache-dir", dir_ / "not-yet"}).ok());
  EXPECT_THAT(check_output_directory({"--cache-dir", dir_ / "model.onnx"}).error().message,
              HasSubstr("--cache-dir " + (dir_ / "model.onnx").string() + ": is a regular file, not a directory"));
}

// --- every command that writes ------------------------------------------------------------

class OutputsCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-outputs-cli");
    test::ModelBuilder b(11);  // below 17: upgrade has something to do
    b.input("x", {1, 4}).node("Relu", {"x"}, {"y"}).output("y", {1, 4});
    b.save(dir_ / "a.onnx");
    for (const std::string set : {"calibration", "holdout", "inputs"}) {
      fs::create_directories(dir_ / set);
      for (int i = 0; i < 2; ++i) {
        const float v = set == "calibration" ? 1.0f + static_cast<float>(i) : set == "holdout" ? -1.0f - static_cast<float>(i) : 0.5f;
        ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {v, -v, v, -v}), dir_ / set / fmt::format("x{}.pb", i)).ok());
      }
    }
    test::write_text(dir_ / "gate.json", R"({"gates": [{"decoder": "tensor", "atol": 1, "rtol": 1}]})");
    test::write_text(dir_ / "spec.json", R"({"dims": {}})");
    fs::create_directories(dir_ / "suite" / "test_relu" / "test_data_set_0");
    fs::copy_file(dir_ / "a.onnx", dir_ / "suite" / "test_relu" / "model.onnx");
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {1, -2, 3, -4}), dir_ / "suite" / "test_relu" / "test_data_set_0" / "input_0.pb").ok());
    ASSERT_TRUE(write_tensor_file(test::float_tensor("y", {1, 4}, {1, 0, 3, 0}), dir_ / "suite" / "test_relu" / "test_data_set_0" / "output_0.pb").ok());
    fs::create_directories(dir_ / "a-directory");
    fs::create_hard_link(dir_ / "a.onnx", dir_ / "a-hard-link.onnx");
    fs::create_symlink(dir_ / "a.onnx", dir_ / "a-link.onnx");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override { model_ = test::read_file(dir_ / "a.onnx"); }
  // Whatever was refused, every input is as it was.
  void TearDown() override {
    EXPECT_EQ(test::read_file(dir_ / "a.onnx"), model_) << "the model was replaced";
    EXPECT_EQ(test::read_file(dir_ / "gate.json"), R"({"gates": [{"decoder": "tensor", "atol": 1, "rtol": 1}]})");
    EXPECT_TRUE(fs::is_regular_file(dir_ / "a-link.onnx") && fs::is_symlink(dir_ / "a-link.onnx"));
    EXPECT_TRUE(fs::is_directory(dir_ / "a-directory"));
    for (const std::string set : {"calibration", "holdout"}) EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / set), {}), 2) << set;
  }

  static test::CommandResult rung(const std::string& args) {
    return test::run_command("env -u RUNG_ORT_DIR " + q(test::cli_path()) + " " + args);
  }
  static std::string ort() { return " --ort-dir " + q(test::runtime_dir("1.30.0")); }
  static std::string hw() { return " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm"); }
  static std::string quantise(const std::string& tail) {
    return "quantise " + q(dir_ / "a.onnx") + " --calibration " + q(dir_ / "calibration") + " --holdout " + q(dir_ / "holdout") + " --gate " +
           q(dir_ / "gate.json") + ort() + " " + tail;
  }
  static void expect_refused(const test::CommandResult& r, const std::vector<std::string>& said, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.out << r.err;
    for (const auto& s : said) EXPECT_THAT(r.err, HasSubstr(s)) << what;
  }

  static inline fs::path dir_;
  std::string model_;
};

TEST_F(OutputsCliTest, QuantiseNeverWritesOverTheModelTheGateOrACalibrationFile) {
  const std::string m = (dir_ / "a.onnx").string();
  expect_refused(rung(quantise("--out " + q(m))), {"--out " + m + " is the model " + m}, "--out MODEL");
  expect_refused(rung(quantise("--out " + q(dir_ / "a-hard-link.onnx"))), {"is the model " + m}, "--out a hard link");
  expect_refused(rung(quantise("--out " + q(dir_ / "a-link.onnx"))), {"is the model " + m}, "--out a symbolic link");
  expect_refused(rung(quantise("--out " + q(dir_ / "gate.json"))), {"is --gate " + (dir_ / "gate.json").string()}, "--out GATE");
  expect_refused(rung(quantise("--out " + q(dir_ / "calibration" / "x0.pb"))), {"in --calibration " + (dir_ / "calibration").string()}, "--out IMAGE");
  expect_refused(rung(quantise("--out " + q(dir_ / "q.onnx") + " --out-json " + q(m))), {"--out-json " + m + " is the model"}, "--out-json MODEL");
  expect_refused(rung(quantise("--out " + q(dir_ / "q.onnx") + " --out-json " + q(dir_ / "holdout" / "x1.pb"))), {"in --holdout"}, "--out-json HOLDOUT");
  expect_refused(rung(quantise("--out " + q(dir_ / "q.onnx") + " --out-json " + q(dir_ / "q.onnx"))), {"name the same file"}, "--out-json OUT");
  EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
}

TEST_F(OutputsCliTest, QuantiseRefusesAnUnwritableOutputBeforeAnyWork) {
  auto missing = rung(quantise("--out " + q(dir_ / "missing" / "x.onnx")));
  expect_refused(missing, {"the directory " + (dir_ / "missing").string() + " does not exist"}, "--out missing/dir");
  EXPECT_THAT(missing.out, Not(HasSubstr("calibrat"))) << "it did the work first";
  expect_refused(rung(quantise("--out " + q(dir_ / "a-directory"))), {"is a directory"}, "--out DIR");
}

TEST_F(OutputsCliTest, UpgradeNeverWritesOverItsModel) {
  const std::string m = (dir_ / "a.onnx").string();
  const std::string upgrade = "upgrade " + q(m) + " --opset 17 --random 1" + ort();
  expect_refused(rung(upgrade + " --out " + q(m)), {"--out " + m + " is the model " + m}, "upgrade MODEL --out MODEL");
  expect_refused(rung(upgrade + " --out " + q(dir_ / "a-hard-link.onnx")), {"is the model"}, "--out a hard link");
  expect_refused(rung(upgrade + " --out " + q(dir_ / "a-directory")), {"--out " + (dir_ / "a-directory").string() + " is a directory"}, "--out DIR");
  expect_refused(rung(upgrade + " --out " + q(dir_ / "missing" / "u.onnx")), {"does not exist"}, "--out missing/dir");
  auto images = rung("upgrade " + q(m) + " --inputs " + q(dir_ / "inputs") + ort() + " --out " + q(dir_ / "inputs" / "x0.pb"));
  expect_refused(images, {"in --inputs"}, "--out an input of the proof");
  auto fine = rung(upgrade + " --out " + q(dir_ / "u.onnx"));
  EXPECT_EQ(fine.exit_code, 0) << fine.out << fine.err;
  fs::remove(dir_ / "u.onnx");
}

TEST_F(OutputsCliTest, BenchNeverWritesOverAModelASpecOrADirectory) {
  const std::string bench = "bench a=" + q(dir_ / "a.onnx") + " --rung cpu --runs 1" + ort() + hw();
  expect_refused(rung(bench + " --out-json " + q(dir_ / "a.onnx")), {"--out-json " + (dir_ / "a.onnx").string() + " is the model a"}, "--out-json MODEL");
  expect_refused(rung(bench + " --html " + q(dir_ / "a-link.onnx")), {"--html", "is the model a"}, "--html a link to the model");
  expect_refused(rung(bench + " --input-spec a=" + q(dir_ / "spec.json") + " --html " + q(dir_ / "spec.json")), {"is --input-spec"}, "--html SPEC");
  expect_refused(rung(bench + " --html " + q(dir_ / "a-directory")), {"--html " + (dir_ / "a-directory").string() + " is a directory"}, "--html DIR");
  expect_refused(rung(bench + " --html " + q(dir_ / "missing" / "r.html")), {"does not exist"}, "--html missing/dir");
  expect_refused(rung(bench + " --out-json " + q(dir_ / "r.json") + " --html " + q(dir_ / "r.json")), {"name the same file"}, "--out-json = --html");
}

TEST_F(OutputsCliTest, ParityNeverWritesOverASideTheGateOrAnInput) {
  const std::string m = (dir_ / "a.onnx").string();
  const std::string parity = "parity --ref " + test::side(dir_ / "a.onnx") + " --cand " + test::side(dir_ / "a.onnx");
  expect_refused(rung(parity + " --random 1 --out-json " + q(m)), {"--out-json " + m + " is --ref model " + m}, "--out-json MODEL");
  expect_refused(rung(parity + " --random 1 --gate " + q(dir_ / "gate.json") + " --out-json " + q(dir_ / "gate.json")), {"is --gate"}, "--out-json GATE");
  expect_refused(rung(parity + " --inputs " + q(dir_ / "inputs") + " --out-json " + q(dir_ / "inputs" / "x1.pb")), {"in --inputs"}, "--out-json INPUT");
  expect_refused(rung(parity + " --random 1 --out-json " + q(dir_ / "a-directory")), {"is a directory"}, "--out-json DIR");
  expect_refused(rung(parity + " --random 1 --out-json " + q(dir_ / "missing" / "p.json")), {"does not exist"}, "--out-json missing/dir");
}

// A file the gate file names (a text gate's character list) is an input too, found by reading the gate file.
TEST_F(OutputsCliTest, NeitherQuantiseNorParityWritesOverTheGateFilesCharacterList) {
  fs::create_directories(dir_ / "text-gate");
  test::write_text(dir_ / "text-gate" / "chars.txt", "a\nb\nc\n");
  test::write_text(dir_ / "text-gate" / "gate.json", R"({"gates": [{"decoder": "text", "output": "y", "characters": "chars.txt"}]})");
  const fs::path chars = dir_ / "text-gate" / "chars.txt";
  const std::string gate = q(dir_ / "text-gate" / "gate.json");
  auto quantised = rung("quantise " + q(dir_ / "a.onnx") + " --calibration " + q(dir_ / "calibration") + " --holdout " + q(dir_ / "holdout") +
                        " --gate " + gate + ort() + " --out " + q(chars));
  expect_refused(quantised, {"--out " + chars.string() + " is the gate file's chars.txt"}, "quantise --out CHARACTERS");
  auto report = rung("quantise " + q(dir_ / "a.onnx") + " --calibration " + q(dir_ / "calibration") + " --holdout " + q(dir_ / "holdout") +
                     " --gate " + gate + ort() + " --out " + q(dir_ / "q.onnx") + " --out-json " + q(chars));
  expect_refused(report, {"--out-json " + chars.string() + " is the gate file's chars.txt"}, "quantise --out-json CHARACTERS");
  const std::string parity = "parity --ref " + test::side(dir_ / "a.onnx") + " --cand " + test::side(dir_ / "a.onnx");
  expect_refused(rung(parity + " --random 1 --gate " + gate + " --out-json " + q(chars)), {"is the gate file's character list"}, "parity --out-json CHARACTERS");
  EXPECT_EQ(test::read_file(chars), "a\nb\nc\n");
  EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
}

// A SQLite registry is written: never the artifact, a document or a record it reads.
TEST_F(OutputsCliTest, RegistryNeverWritesItsDatabaseOverAnInput) {
  const std::string m = (dir_ / "a.onnx").string();
  auto add = rung("registry --registry " + q(m) + " add a=" + q(m) + " --version 1 --made-by test" + ort() + hw());
  expect_refused(add, {"--registry " + m + " is the artifact " + m}, "registry --registry ARTIFACT add");
  test::write_text(dir_ / "record.json", "{}");
  auto import = rung("registry --registry " + q(dir_ / "record.json") + " import " + q(dir_ / "record.json"));
  expect_refused(import, {"is a record " + (dir_ / "record.json").string()}, "registry --registry RECORD import");
  EXPECT_EQ(test::read_file(dir_ / "record.json"), "{}");
}

TEST_F(OutputsCliTest, ConformNeverWritesOverItsSuite) {
  const fs::path model = dir_ / "suite" / "test_relu" / "model.onnx";
  const std::string suite_model = test::read_file(model);
  const std::string conform = "conform --suite " + q(dir_ / "suite") + " --rung cpu" + ort() + hw();
  expect_refused(rung(conform + " --out-json " + q(model)), {"--out-json " + model.string() + " is " + model.string() + " in --suite"}, "--out-json a suite's model");
  expect_refused(rung(conform + " --html " + q(dir_ / "a-directory")), {"is a directory"}, "--html DIR");
  expect_refused(rung(conform + " --out-json " + q(dir_ / "c.out") + " --html " + q(dir_ / "c.out")), {"name the same file"}, "--out-json = --html");
  expect_refused(rung(conform + " --out-json " + q(dir_ / "missing" / "c.json")), {"does not exist"}, "--out-json missing/dir");
  EXPECT_EQ(test::read_file(model), suite_model);
}

// An output never lands inside an input directory (the next run would read it
// as an input) nor inside rung's own state (the cache, the data directory, the
// registry): refused at argument time, before any calibration, timing or probe.
TEST_F(OutputsCliTest, NoCommandWritesIntoAnInputDirectoryOrIntoRungsStateAndItRefusesBeforeWork) {
  const fs::path state = dir_ / "state";
  fs::create_directories(state / "cache");
  fs::create_directories(state / "data" / "rung");
  const std::string parity = "parity --ref " + test::side(dir_ / "a.onnx") + " --cand " + test::side(dir_ / "a.onnx");
  const std::string conform = "conform --suite " + q(dir_ / "suite") + " --rung cpu" + ort() + hw();
  const std::string upgrade = "upgrade " + q(dir_ / "a.onnx") + " --opset 17 --inputs " + q(dir_ / "inputs") + ort();
  const std::string bench = "bench a=" + q(dir_ / "a.onnx") + " --rung cpu --runs 1 --input " + q(dir_ / "inputs") + ort() + hw();
  const std::string probe = "probe --model a=" + q(dir_ / "a.onnx") + ort() + hw();
  struct Case {
    std::string env, args, said, made;  // `made`: the file or directory that must not appear
  };
  const std::string cal = (dir_ / "calibration").string(), inputs = (dir_ / "inputs").string(), suite = (dir_ / "suite").string();
  const std::vector<Case> cases = {
      {"", quantise("--out " + q(dir_ / "calibration" / "new.onnx")), "is inside --calibration " + cal, (dir_ / "calibration" / "new.onnx").string()},
      {"", quantise("--out " + q(dir_ / "q.onnx") + " --out-json " + q(dir_ / "holdout" / "r.json")), "is inside --holdout", (dir_ / "holdout" / "r.json").string()},
      {"", quantise("--out " + q(dir_ / "holdout" / ".." / "calibration" / "q.onnx")), "is inside --calibration", (dir_ / "calibration" / "q.onnx").string()},
      {"", quantise("--out " + q(dir_ / "q.onnx") + " --work-dir " + q(dir_ / "calibration" / "w")), "--work-dir " + cal + "/w is inside --calibration", (dir_ / "calibration" / "w").string()},
      {"", parity + " --inputs " + q(dir_ / "inputs") + " --out-json " + q(dir_ / "inputs" / "new.json"), "is inside --inputs " + inputs, (dir_ / "inputs" / "new.json").string()},
      {"", parity + " --inputs " + q(dir_ / "inputs") + " --work-dir " + q(dir_ / "inputs" / "w"), "--work-dir " + inputs + "/w is inside --inputs", (dir_ / "inputs" / "w").string()},
      {"", conform + " --out-json " + q(dir_ / "suite" / "c.json"), "is inside --suite " + suite, (dir_ / "suite" / "c.json").string()},
      {"", conform + " --work-dir " + q(dir_ / "suite" / "test_relu"), "--work-dir " + suite + "/test_relu is inside --suite", ""},
      {"", upgrade + " --out " + q(dir_ / "inputs" / "u.onnx"), "is inside --inputs " + inputs, (dir_ / "inputs" / "u.onnx").string()},
      {"", bench + " --out-json " + q(dir_ / "inputs" / "b.json"), "is inside --input " + inputs, (dir_ / "inputs" / "b.json").string()},
      // rung's state: the cache named, the cache in effect, the data directory, the registry named.
      {"", probe + " --cache-dir " + q(state / "cache") + " --out-json " + q(state / "cache" / "probe.json"), "is inside rung's cache " + (state / "cache").string(),
       (state / "cache" / "probe.json").string()},
      {"RUNG_CACHE_DIR=" + q(state / "cache"), probe + " --out-json " + q(state / "cache" / "new.json"), "is inside rung's cache", (state / "cache" / "new.json").string()},
      {"RUNG_CACHE_DIR=" + q(state / "cache"), bench + " --out-json " + q(state / "cache" / "b.json"), "is inside rung's cache", (state / "cache" / "b.json").string()},
      {"XDG_DATA_HOME=" + q(state / "data"), quantise("--out " + q(state / "data" / "rung" / "registry.sqlite")), "is inside rung's data directory (the registry)",
       (state / "data" / "rung" / "registry.sqlite").string()},
      {"RUNG_REGISTRY=sqlite:" + (dir_ / "team.sqlite").string(), upgrade + " --out " + q(dir_ / "team.sqlite"), "is the registry (RUNG_REGISTRY)", ""},
  };
  test::write_text(dir_ / "team.sqlite", "a registry");
  for (const auto& c : cases) {
    const auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_CACHE_DIR -u RUNG_REGISTRY " + c.env + " " + q(test::cli_path()) + " " + c.args);
    expect_refused(r, {c.said}, c.args);
    EXPECT_EQ(r.out, "") << "it did work before refusing: " << c.args;
    if (!c.made.empty()) {
      EXPECT_FALSE(fs::exists(c.made)) << c.made;
    }
  }
  EXPECT_EQ(test::read_file(dir_ / "team.sqlite"), "a registry");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "inputs"), {}), 2);
  EXPECT_EQ(std::distance(fs::directory_iterator(state / "cache"), {}), 0);
  fs::remove_all(state);
  fs::remove(dir_ / "team.sqlite");
}

TEST_F(OutputsCliTest, ProbeAndPrepareRefuseACacheDirectoryThatIsAFile) {
  for (const std::string command : {"probe", "prepare"}) {
    auto r = rung(command + " --model a=" + q(dir_ / "a.onnx") + " --cache-dir " + q(dir_ / "a.onnx") + ort() + hw());
    expect_refused(r, {"--cache-dir " + (dir_ / "a.onnx").string() + ": is a regular file, not a directory"}, command);
  }
}

}  // namespace
}  // namespace rung
