// Where rung keeps its own files when the caller names no place, and what a
// bad RUNG_ORT_DIR means. Without a usable HOME (unset, relative, not a
// directory) the cache and the registry go to a private rung-<uid> under
// $TMPDIR, made 0700 and checked each time: a link, another user's directory or
// one others can write to there is refused (exit 2) naming what to set, and
// nothing is written through it. An empty or unusable RUNG_ORT_DIR is exit 3
// in every command that loads a runtime, naming the setting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/registry.h"
#include "rung/user_dirs.h"
#include "session/tensor_file.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::q;

class UserDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-user-dirs");
    private_ = dir_ / fmt::format("rung-{}", ::geteuid());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // No XDG directories, no HOME: only the private fallback under dir_ is left.
  struct NoHome {
    explicit NoHome(const fs::path& tmp) : tmpdir("TMPDIR", tmp.c_str()) {}
    test::ScopedEnv tmpdir;
    test::ScopedEnv home{"HOME", nullptr}, cache{"XDG_CACHE_HOME", nullptr}, data{"XDG_DATA_HOME", nullptr}, reg{"RUNG_REGISTRY", nullptr};
  };

  // The same for a child: the command line's environment.
  std::string no_home() const {
    return "env -u HOME -u XDG_CACHE_HOME -u XDG_DATA_HOME -u RUNG_CACHE_DIR -u RUNG_REGISTRY -u RUNG_ORT_DIR TMPDIR=" + q(dir_) + " ";
  }

  fs::path dir_, private_;
};

TEST_F(UserDirsTest, XdgDirectoriesWinWhenAbsoluteAndAreIgnoredWhenRelative) {
  NoHome env(dir_);
  test::ScopedEnv cache("XDG_CACHE_HOME", "/srv/cache");
  test::ScopedEnv data("XDG_DATA_HOME", "/srv/data");
  EXPECT_EQ(user_cache_dir().value(), fs::path("/srv/cache/rung"));
  EXPECT_EQ(user_data_dir().value(), fs::path("/srv/data/rung"));
  test::ScopedEnv relative("XDG_CACHE_HOME", "cache");
  EXPECT_EQ(user_cache_dir().value(), private_ / "cache");
}

TEST_F(UserDirsTest, HomeCountsWhenItIsADirectoryOfTheUsers) {
  NoHome env(dir_);
  fs::create_directories(dir_ / "home");
  test::ScopedEnv home("HOME", (dir_ / "home").c_str());
  EXPECT_EQ(user_cache_dir().value(), dir_ / "home" / ".cache" / "rung");
  EXPECT_EQ(user_data_dir().value(), dir_ / "home" / ".local" / "share" / "rung");
  EXPECT_FALSE(fs::exists(private_));
}

TEST_F(UserDirsTest, WithoutAUsableHomeAPrivateDirectoryIsMadeAndUsed) {
  for (const char* home : {static_cast<const char*>(nullptr), "", "relative/home", "/nonexistent/rung-home"}) {
    NoHome env(dir_);
    test::ScopedEnv h("HOME", home);
    auto cache = user_cache_dir();
    ASSERT_TRUE(cache.ok()) << (home ? home : "unset") << ": " << cache.error().message;
    EXPECT_EQ(*cache, private_ / "cache");
    EXPECT_EQ(user_data_dir().value(), private_ / "data");
    struct stat st {};
    ASSERT_EQ(::lstat(private_.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(st.st_uid, ::geteuid());
    fs::remove_all(private_);
  }
  NoHome env(dir_);
  EXPECT_EQ(Registry::default_url().value(), "sqlite:" + (private_ / "data" / "registry.sqlite").string());
}

// What another local user could plant under the guessable name, each refused alone.
TEST_F(UserDirsTest, APlantedPrivateDirectoryIsRefusedNamingWhatToSet) {
  NoHome env(dir_);
  fs::create_directories(dir_ / "theirs");
  fs::create_symlink(dir_ / "theirs", private_);
  auto link = user_cache_dir();
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(link.error().message, HasSubstr(private_.string() + " is a symbolic link"));
  EXPECT_THAT(link.error().message, HasSubstr("HOME is not set"));
  EXPECT_THAT(link.error().message, HasSubstr("set XDG_CACHE_HOME or HOME"));
  auto url = Registry::default_url();
  ASSERT_FALSE(url.ok());
  EXPECT_THAT(url.error().message, HasSubstr("set XDG_DATA_HOME or HOME"));
  EXPECT_THAT(url.error().message, HasSubstr("RUNG_REGISTRY"));
  fs::remove(private_);

  fs::create_directory(private_);
  fs::permissions(private_, fs::perms(0777));
  auto writable = user_cache_dir();
  ASSERT_FALSE(writable.ok());
  EXPECT_THAT(writable.error().message, HasSubstr(private_.string() + " is writable by other users (mode 777)"));
  fs::permissions(private_, fs::perms(0720));
  EXPECT_FALSE(user_cache_dir().ok()) << "group-writable";
  fs::permissions(private_, fs::perms(0700));
  EXPECT_TRUE(user_cache_dir().ok());

  fs::remove(private_);
  test::write_text(private_, "a file");
  EXPECT_THAT(user_cache_dir().error().message, HasSubstr("is not a directory"));
  fs::remove(private_);

  if (::geteuid() == 0) {  // only root can make a directory another user owns
    fs::create_directory(private_, dir_);
    fs::permissions(private_, fs::perms(0700));
    ASSERT_EQ(::chown(private_.c_str(), 65534, 65534), 0);
    auto theirs = user_cache_dir();
    ASSERT_FALSE(theirs.ok());
    EXPECT_THAT(theirs.error().message, HasSubstr("is owned by uid 65534, not by you"));
  }
}

TEST_F(UserDirsTest, ProbeWithoutHomeCachesInThePrivateDirectoryAndRefusesAPlantedOne) {
  test::write_elementwise_model(dir_ / "a.onnx", {1, 4});
  const std::string probe = fmt::format("{} probe --model a={} --ort-dir {} --hardware-root {} --deadline 120", q(test::cli_path()),
                                        q(dir_ / "a.onnx"), q(test::runtime_dir("1.30.0")), q(test::fixtures_dir() / "hardware" / "cpu-vm"));
  fs::create_directories(dir_ / "theirs");
  fs::create_symlink(dir_ / "theirs", private_);
  auto planted = test::run_command(no_home() + probe);
  EXPECT_EQ(planted.exit_code, 2) << planted.out << planted.err;
  EXPECT_THAT(planted.err, HasSubstr(private_.string() + " is a symbolic link"));
  EXPECT_THAT(planted.err, HasSubstr("--cache-dir"));
  EXPECT_TRUE(fs::is_empty(dir_ / "theirs")) << "written through the planted link";
  EXPECT_FALSE(fs::exists(dir_ / "rung-probe")) << "a shared fixed directory";

  fs::remove(private_);
  auto own = test::run_command(no_home() + probe);
  EXPECT_EQ(own.exit_code, 0) << own.out << own.err;
  EXPECT_FALSE(fs::is_empty(private_ / "cache" / "probe"));
  EXPECT_FALSE(fs::exists(dir_ / "rung-probe"));
}

TEST_F(UserDirsTest, TheRegistryWithoutHomeRefusesAPlantedPrivateDirectory) {
  fs::create_directories(dir_ / "theirs");
  fs::create_symlink(dir_ / "theirs", private_);
  test::write_elementwise_model(dir_ / "a.onnx", {1, 4});
  for (const std::string& args : {std::string("list"), "add a=" + q(dir_ / "a.onnx") + " --version 1 --ort 1.30.0 --device d --made-by x"}) {
    auto r = test::run_command(no_home() + q(test::cli_path()) + " registry " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(private_.string() + " is a symbolic link")) << args;
    EXPECT_THAT(r.err, HasSubstr("RUNG_REGISTRY")) << args;
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "theirs"));
  EXPECT_FALSE(fs::exists(dir_ / "rung")) << "the old shared fallback, $TMPDIR/rung/registry.sqlite";
}

// --- RUNG_ORT_DIR -------------------------------------------------------------------

class BadOrtDirTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("rung-bad-ort-dir");
    test::write_elementwise_model(dir_ / "a.onnx", {1, 4});
    // A suite of one test, a tensor gate and calibration and holdout sets: every command gets as far as its runtime.
    fs::create_directories(dir_ / "suite" / "test_relu" / "test_data_set_0");
    fs::copy_file(dir_ / "a.onnx", dir_ / "suite" / "test_relu" / "model.onnx");
    const std::vector<float> x = {1, -2, 3, -4}, y = {1, 0, 3, 0};
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, x), dir_ / "suite" / "test_relu" / "test_data_set_0" / "input_0.pb").ok());
    ASSERT_TRUE(write_tensor_file(test::float_tensor("y", {1, 4}, y), dir_ / "suite" / "test_relu" / "test_data_set_0" / "output_0.pb").ok());
    for (const std::string set : {"calibration", "holdout"}) {
      fs::create_directories(dir_ / set);
      for (int i = 0; i < 2; ++i) {
        const float v = set == "calibration" ? 1.0f + static_cast<float>(i) : -1.0f - static_cast<float>(i);
        ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 4}, {v, v, v, v}), dir_ / set / fmt::format("{}.pb", i)).ok());
      }
    }
    test::write_text(dir_ / "gate.json", R"({"gates": [{"decoder": "tensor"}]})");
    fs::create_directories(dir_ / "empty");
    test::write_text(dir_ / "a-file", "not a directory");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // Every command that loads a runtime, each with inputs good enough to reach it.
  static std::vector<std::string> commands() {
    const std::string m = q(dir_ / "a.onnx"), hw = " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm");
    return {
        "doctor" + hw,
        "probe --model a=" + m + " --cache-dir " + q(dir_ / "cache") + hw,
        "prepare --model a=" + m + " --cache-dir " + q(dir_ / "cache") + hw,
        "bench " + m + " --rung cpu --runs 1" + hw,
        "parity --ref " + m + " --cand " + m + " --random 1",
        "conform --suite " + q(dir_ / "suite") + " --rung cpu",
        "quantise " + m + " --calibration " + q(dir_ / "calibration") + " --holdout " + q(dir_ / "holdout") + " --gate " + q(dir_ / "gate.json") +
            " --out " + q(dir_ / "q.onnx"),
        "upgrade " + m + " --out " + q(dir_ / "u.onnx") + " --random 1",
        "variants resolve" + hw,
        "registry --registry " + q(dir_ / "r.sqlite") + " add a=" + m + " --version 1 --device d --made-by x",
    };
  }

  static inline fs::path dir_;
};

TEST_F(BadOrtDirTest, IsExitThreeNamingTheSettingInEveryCommand) {
  const std::vector<std::pair<std::string, std::string>> values = {
      {"", "is set but empty"},
      {"runtimes/onnxruntime-1.30.0", "is a relative path"},
      {(dir_ / "missing").string(), "does not exist"},
      {(dir_ / "a-file").string(), ": is a regular file, not a directory"},
      {(dir_ / "empty").string(), "holds no libonnxruntime.so"},
  };
  for (const auto& [value, said] : values) {
    for (const auto& command : commands()) {
      auto r = test::run_command("env RUNG_ORT_DIR=" + q(value) + " " + q(test::cli_path()) + " " + command);
      EXPECT_EQ(r.exit_code, 3) << "RUNG_ORT_DIR=" << value << " " << command << "\n" << r.out << r.err;
      EXPECT_THAT(r.err, HasSubstr("RUNG_ORT_DIR")) << value << " " << command;
      EXPECT_THAT(r.err, HasSubstr(said)) << value << " " << command;
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
  EXPECT_FALSE(fs::exists(dir_ / "u.onnx"));
}

// An --ort-dir the user named is the build the command uses, or the command says why not (exit 3): a build
// there refused for safety, or one that does not load, is never replaced by another build found elsewhere.
TEST_F(BadOrtDirTest, AnOrtDirWhoseBuildIsRefusedIsExitThreeSayingWhyNeverAnotherBuild) {
  fs::create_directories(dir_ / "open");
  fs::copy_file(test::runtime_dir("1.30.0") / "libonnxruntime.so.1", dir_ / "open" / "libonnxruntime.so.1", fs::copy_options::overwrite_existing);
  fs::permissions(dir_ / "open", fs::perms::all);  // 0777: anyone may swap the library
  fs::create_directories(dir_ / "junk");
  test::write_text(dir_ / "junk" / "libonnxruntime.so.1", "not a shared library");
  const std::vector<std::pair<fs::path, std::string>> dirs = {{dir_ / "open", "is writable by other users (mode 777)"},
                                                             {dir_ / "junk", "libonnxruntime.so.1"}};
  for (const auto& [ort, said] : dirs) {
    for (const auto& command : commands()) {
      auto r = test::run_command("env -u RUNG_ORT_DIR " + q(test::cli_path()) + " " + command + " --ort-dir " + q(ort));
      if (command.starts_with("doctor")) {
        // The doctor lists every build: the named one with its reason, the others as found.
        EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out << r.err;
        EXPECT_THAT(r.out, HasSubstr(said)) << ort;
        continue;
      }
      EXPECT_EQ(r.exit_code, 3) << ort << " " << command << "\n" << r.out << r.err;
      EXPECT_THAT(r.err, HasSubstr("the runtime directory " + ort.string() + " cannot serve")) << ort << " " << command << "\n" << r.err;
      EXPECT_THAT(r.err, HasSubstr(said)) << ort << " " << command;
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
  EXPECT_FALSE(fs::exists(dir_ / "u.onnx"));
  fs::permissions(dir_ / "open", fs::perms::owner_all);
}

// The caller's own --ort-dir stays a usage error: it is an argument, not the environment.
TEST_F(BadOrtDirTest, ABadOrtDirOptionIsStillAUsageError) {
  auto r = test::run_command("env -u RUNG_ORT_DIR " + q(test::cli_path()) + " doctor --ort-dir " + q(dir_ / "empty"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("holds no libonnxruntime.so"));
}

}  // namespace
}  // namespace rung
