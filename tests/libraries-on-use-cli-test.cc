// OpenSSL's libcrypto, SQLite and stb are loaded when first used, not at exec
// (os/system_library.h): a warm probe never loads libcrypto, and a command that
// needs one that will not load says which, why, and which package provides it,
// and exits 1 — never a crash, never "internal error". Each library is made
// unloadable alone, through LD_LIBRARY_PATH, in two ways: a file that is no
// library, and a real library without the functions rung binds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_builder.h"
#include "parity_test_support.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::q;

struct Broken {
  const char* name;
  bool elf;  // a real shared library (the simulated accelerator) under the library's name, else a text file
};

class LibrariesOnUseCliTest : public ::testing::TestWithParam<Broken> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-on-use");
    model_ = test::write_elementwise_model(dir_ / "tiny.onnx", {1, 4, 8});
    fs::create_directories(dir_ / "broken");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `file` in the broken directory, as this test's parameter makes it.
  void break_library(const std::string& file) {
    if (GetParam().elf) {
      fs::copy_file(test::sim_ep_path(), dir_ / "broken" / file);
    } else {
      test::write_text(dir_ / "broken" / file, "not a shared library");
    }
  }
  std::string with_broken(const std::string& program, const std::string& args) {
    return "env LD_LIBRARY_PATH=" + q(dir_ / "broken") + " " + q(program) + " " + args;
  }
  std::string probe_args(bool force) {
    return "probe --in-process --model tiny=" + q(model_) + " --cache-dir " + q(dir_ / "cache") + " --ort-dir " +
           q(test::runtime_dir("1.30.0")) + (force ? " --force" : "");
  }
  std::string why(const std::string& file) const {
    return file + (GetParam().elf ? " has no " : " cannot be loaded");
  }

  fs::path dir_, model_;
};

TEST_P(LibrariesOnUseCliTest, AWarmProbeNeverLoadsLibcryptoAndAColdOneSaysWhyItCannotHash) {
  auto cold = test::run_command(q(test::cli_path()) + " " + probe_args(false));
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  break_library("libcrypto.so.3");
  // Nothing changed: the file-hash cache answers, so nothing is hashed and libcrypto is never opened.
  auto warm = test::run_command(with_broken(test::cli_path(), probe_args(false)));
  EXPECT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_THAT(warm.out, HasSubstr("(from the cache"));
  // A model that changed must be hashed again.
  test::write_elementwise_model(model_, {1, 4, 9});
  auto changed = test::run_command(with_broken(test::cli_path(), probe_args(false)));
  EXPECT_EQ(changed.exit_code, 1) << changed.err;
  EXPECT_THAT(changed.err, HasSubstr("OpenSSL's libcrypto, for SHA-256 (Debian's package libssl3 provides it)"));
  EXPECT_THAT(changed.err, HasSubstr(why("libcrypto.so.3")));
  EXPECT_THAT(changed.err, Not(HasSubstr("internal error")));
  EXPECT_EQ(changed.out, "");
}

TEST_P(LibrariesOnUseCliTest, ARegistryWithoutSqliteSaysWhyAndAProbeNeverNeedsIt) {
  break_library("libsqlite3.so.0");
  auto listed = test::run_command(with_broken(test::cli_path(), "registry list --registry " + q("sqlite:" + (dir_ / "r.db").string())));
  EXPECT_NE(listed.exit_code, 0);
  EXPECT_THAT(listed.err, HasSubstr("SQLite, for the registry (Debian's package libsqlite3-0 provides it)"));
  EXPECT_THAT(listed.err, HasSubstr(why("libsqlite3.so.0")));
  EXPECT_THAT(listed.err, Not(HasSubstr("internal error")));
  EXPECT_FALSE(fs::exists(dir_ / "r.db"));  // nothing made for a registry it could not open
  auto probe = test::run_command(with_broken(test::cli_path(), probe_args(false)));
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
}

TEST_P(LibrariesOnUseCliTest, AnImageWithoutStbIsNamedWithWhy) {
  break_library("libstb.so.0");
  fs::create_directories(dir_ / "images");
  test::write_text(dir_ / "images" / "page.png", "\x89PNG\r\n\x1a\n not decoded: stb is needed first");
  auto r = test::run_command(with_broken(test::binary_dir() / "ocr-lines",
                                         q(dir_ / "images") + " --models " + q(test::deps_dir() / "models" / "ppocr") + " --ort-dir " +
                                             q(test::runtime_dir("1.30.0")) + " --cache-dir " + q(dir_ / "cache")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("page.png"));
  EXPECT_THAT(r.err, HasSubstr("stb, for images (Debian's package libstb0 provides it)"));
  EXPECT_THAT(r.err, HasSubstr(why("libstb.so.0")));
}

INSTANTIATE_TEST_SUITE_P(EachWayOfBreaking, LibrariesOnUseCliTest,
                         ::testing::Values(Broken{"not_a_library", false}, Broken{"a_library_without_the_functions", true}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace rung
