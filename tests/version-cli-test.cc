// `rung --version`: rung's own version (the CMake project's), the ONNX Runtime
// API it is compiled against, and each build it finds with the API that build
// serves it and where it was found; exit 0 even when no build is found.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The version in the top-level CMakeLists.txt's project() line.
std::string project_version() {
  const std::string text = test::read_file(test::fixtures_dir().parent_path().parent_path() / "CMakeLists.txt");
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(project\(rung VERSION ([0-9.]+))"))) return "?";
  return m[1];
}

test::CommandResult version(const std::string& env, const fs::path& cli = test::cli_path()) {
  return test::run_command("env -u RUNG_ORT_DIR " + env + " '" + cli.string() + "' --version");
}

TEST(VersionCliTest, SaysRungsVersionAndEveryBuildItFindsWithItsApiAndWhereItWasFound) {
  auto r = version("");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("rung " + project_version() + "\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nONNX Runtime API: compiled against [0-9]+ \\(builds serving 17 or newer are used\\)\n"));
  // The builds beside the CLI in the build tree (tools/fetch-deps.sh's three), each with the API it serves and its origin.
  for (const std::string v : {"1.30.0", "1.29.0", "1.28.2"}) {
    EXPECT_THAT(r.out, ::testing::ContainsRegex("\n  [* ] " + std::regex_replace(v, std::regex("\\."), "\\.") +
                                                " \\(serves API [0-9]+( or newer)?\\) /[^ ]*/libonnxruntime\\.so[^ ]* \\(beside executable\\)\n"))
        << v;
  }
  EXPECT_THAT(r.out, HasSubstr("(serves API 28) ")) << "1.28.2 serves its own API, 28";
  EXPECT_THAT(r.out, HasSubstr("\n  chosen: "));
}

TEST(VersionCliTest, RungOrtDirIsNamedAsWhereItsBuildWasFound) {
  auto r = version("RUNG_ORT_DIR='" + test::runtime_dir("1.28.2").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  * 1.28.2 (serves API 28) " + test::runtime_dir("1.28.2").string()));
  EXPECT_THAT(r.out, HasSubstr(" (RUNG_ORT_DIR)\n"));
}

// With RUNG_ORT_DIR naming an empty directory, rung would run on no build: the version still prints, and why none is found.
TEST(VersionCliTest, NoBuildFoundStillPrintsTheVersionAndSaysWhyExitZero) {
  const fs::path empty = test::make_temp_dir("rung-version-empty");
  auto r = version("RUNG_ORT_DIR='" + empty.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("rung " + project_version() + "\n"));
  EXPECT_THAT(r.out, HasSubstr("\nONNX Runtime builds: none found: RUNG_ORT_DIR=" + empty.string()));
  EXPECT_THAT(r.out, Not(HasSubstr("serves API")));

  // A copy of the CLI with no runtimes/ beside it and no RUNG_ORT_DIR finds none either.
  test::copy_cli_to(empty);
  fs::remove_all(empty / "runtimes");
  auto lonely = version("", empty / "rung");
  EXPECT_EQ(lonely.exit_code, 0) << lonely.out << lonely.err;
  EXPECT_THAT(lonely.out, StartsWith("rung " + project_version() + "\n"));
  EXPECT_THAT(lonely.out, HasSubstr("\nONNX Runtime builds: none found: "));
  fs::remove_all(empty);
}

}  // namespace
}  // namespace rung
