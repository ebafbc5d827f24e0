// Runtime builds on disk: the three real builds, the search list, and every bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "rung/runtime.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

fs::path library_of(const std::string& version) {
  for (const auto& e : fs::directory_iterator(test::runtime_dir(version))) {
    if (e.path().filename().string().rfind("libonnxruntime.so", 0) == 0) return e.path();
  }
  return {};
}

using test::ScopedEnv;

RuntimeSearchOptions only(const fs::path& dir) {
  RuntimeSearchOptions o;
  o.explicit_dir = dir;
  o.include_default_locations = false;
  o.read_environment = false;
  return o;
}

TEST(RuntimeBuildTest, LoadsOnnxRuntime1300AtOurApiVersion) {
  auto b = load_runtime_build(library_of("1.30.0"));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->version, "1.30.0");
  EXPECT_EQ(b->api_version, compiled_api_version());
  EXPECT_EQ(b->api_version, 29);
  if (test::kFetched130CarriesGpuProviders) {
    EXPECT_THAT(b->providers, ElementsAre("TensorrtExecutionProvider", "CUDAExecutionProvider", "WebGpuExecutionProvider",
                                          "CPUExecutionProvider"));
  } else {
    EXPECT_THAT(b->providers, ElementsAre("CPUExecutionProvider"));
  }
  EXPECT_NE(b->api, nullptr);
}

TEST(RuntimeBuildTest, LoadsOnnxRuntime129) {
  auto b = load_runtime_build(library_of("1.29"));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->version, "1.29.0");
  EXPECT_EQ(b->api_version, 29);
  EXPECT_THAT(b->providers, ElementsAre("CPUExecutionProvider"));
}

TEST(RuntimeBuildTest, OlderBuildIsUsedAtItsOwnApiVersion) {
  // 1.28.2 answers null to GetApi(29): rung must take 28 and say so, not crash.
  auto b = load_runtime_build(library_of("1.28.2"));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->version, "1.28.2");
  EXPECT_EQ(b->api_version, 28);
  EXPECT_LT(b->api_version, compiled_api_version());
  EXPECT_THAT(b->providers, ElementsAre("CPUExecutionProvider"));
}

TEST(RuntimeBuildTest, AllThreeBuildsLiveInOneProcess) {
  auto a = load_runtime_build(library_of("1.30.0"));
  auto b = load_runtime_build(library_of("1.29"));
  auto c = load_runtime_build(library_of("1.28.2"));
  ASSERT_TRUE(a && b && c);
  EXPECT_NE(a->api, b->api);
  EXPECT_NE(b->api, c->api);
}

TEST(RuntimeBuildTest, TextFileNamedLikeTheLibraryIsSkippedWithTheLoaderReason) {
  auto dir = test::make_temp_dir("rung-text");
  std::ofstream(dir / "libonnxruntime.so") << "this is not a shared library\n";
  auto b = load_runtime_build(dir / "libonnxruntime.so");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kLoadFailed);
  EXPECT_THAT(b.error().message, HasSubstr((dir / "libonnxruntime.so").string()));
  EXPECT_THAT(b.error().message, HasSubstr("not loadable"));
  EXPECT_THAT(b.error().message, ::testing::AnyOf(HasSubstr("invalid ELF header"), HasSubstr("file too short")));
  fs::remove_all(dir);
}

TEST(RuntimeBuildTest, TruncatedElfIsSkippedWithTheLoaderReason) {
  auto dir = test::make_temp_dir("rung-trunc");
  {
    std::ifstream in(library_of("1.30.0"), std::ios::binary);
    std::vector<char> head(64 * 1024);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(dir / "libonnxruntime.so", std::ios::binary).write(head.data(), in.gcount());
  }
  auto b = load_runtime_build(dir / "libonnxruntime.so");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kLoadFailed);
  EXPECT_THAT(b.error().message, HasSubstr("not loadable"));
  fs::remove_all(dir);
}

TEST(RuntimeBuildTest, SharedLibraryWithoutOrtGetApiBaseIsNotABuild) {
  auto dir = test::make_temp_dir("rung-other");
  // A real ELF shared object that is not ONNX Runtime: the sim EP plugin.
  fs::copy_file(test::sim_ep_path(), dir / "libonnxruntime.so");
  auto b = load_runtime_build(dir / "libonnxruntime.so");
  ASSERT_FALSE(b);
  EXPECT_THAT(b.error().message, HasSubstr("no OrtGetApiBase"));
  fs::remove_all(dir);
}

TEST(RuntimeBuildTest, RelativePathIsRefused) {
  auto b = load_runtime_build("libonnxruntime.so");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(b.error().message, HasSubstr("absolute path only"));
}

TEST(RuntimeBuildTest, LibraryOthersCanWriteIsRefusedUnlessAllowed) {
  auto dir = test::make_temp_dir("rung-perm");
  fs::copy_file(library_of("1.29"), dir / "libonnxruntime.so");
  ::chmod((dir / "libonnxruntime.so").c_str(), 0666);
  auto refused = load_runtime_build(dir / "libonnxruntime.so");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kPermission);
  EXPECT_THAT(refused.error().message, HasSubstr((dir / "libonnxruntime.so").string()));
  EXPECT_THAT(refused.error().message, HasSubstr("writable by other users"));
  auto allowed = load_runtime_build(dir / "libonnxruntime.so", /*allow_writable_by_others=*/true);
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->version, "1.29.0");
  fs::remove_all(dir);
}

// What the runtime loads from beside itself (a provider library, DirectML.dll) is held to its
// rule: one other users may write refuses the build, naming that file, unless allowed. A file
// the runtime does not load (a text file, another library), or a directory of that name, is not judged.
TEST(RuntimeBuildTest, ALibraryBesideTheRuntimeOthersCanWriteRefusesIt) {
  auto dir = test::make_temp_dir("rung-perm-beside");
  fs::copy_file(library_of("1.29"), dir / "libonnxruntime.so");
  ::chmod((dir / "libonnxruntime.so").c_str(), 0644);
  std::ofstream(dir / "notes.txt") << "not a library";
  ::chmod((dir / "notes.txt").c_str(), 0666);
  std::ofstream(dir / "libunrelated.so") << "a library the runtime never loads";
  ::chmod((dir / "libunrelated.so").c_str(), 0666);
  fs::create_directories(dir / "libonnxruntime_providers_cuda.so");
  ::chmod((dir / "libonnxruntime_providers_cuda.so").c_str(), 0777);
  ASSERT_TRUE(load_runtime_build(dir / "libonnxruntime.so")) << "files others may write that the runtime does not load";
  const fs::path provider = dir / "libonnxruntime_providers_shared.so";
  std::ofstream(provider) << "a provider library";
  ::chmod(provider.c_str(), 0644);
  ASSERT_TRUE(load_runtime_build(dir / "libonnxruntime.so")) << "a provider only its owner may write is fine";
  ::chmod(provider.c_str(), 0666);
  auto refused = load_runtime_build(dir / "libonnxruntime.so");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kPermission);
  EXPECT_THAT(refused.error().message, HasSubstr((dir / "libonnxruntime.so").string() + ": refused, " + provider.string() +
                                                 ", which it loads from beside itself: "));
  EXPECT_THAT(refused.error().message, HasSubstr("writable by other users"));
  ::chmod(provider.c_str(), 0666);
  auto allowed = load_runtime_build(dir / "libonnxruntime.so", /*allow_writable_by_others=*/true);
  ASSERT_TRUE(allowed) << allowed.error().message;
  fs::remove_all(dir);
}

TEST(RuntimeBuildTest, DirectoryOthersCanWriteIsRefused) {
  auto dir = test::make_temp_dir("rung-permdir");
  fs::copy_file(library_of("1.29"), dir / "libonnxruntime.so");
  ::chmod((dir / "libonnxruntime.so").c_str(), 0644);
  ::chmod(dir.c_str(), 0777);
  auto refused = load_runtime_build(dir / "libonnxruntime.so");
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr(dir.string() + " is writable by other users"));
  fs::remove_all(dir);
}

TEST(RuntimeDiscoveryTest, FindsAllThreeBuildsNewestFirstAndChoosesTheNewestOnEqualScores) {
  Hardware cpu_only;
  cpu_only.pci_visible = true;
  auto d = discover_runtimes(only(test::deps_dir() / "runtimes"), cpu_only);
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->builds.size(), 3u);
  EXPECT_EQ(d->builds[0].version, "1.30.0");
  EXPECT_EQ(d->builds[1].version, "1.29.0");
  EXPECT_EQ(d->builds[2].version, "1.28.2");
  for (const auto& b : d->builds) {
    EXPECT_TRUE(b.loaded);
    EXPECT_EQ(b.score, 1);
    EXPECT_EQ(b.origin, SearchOrigin::kExplicit);
  }
  ASSERT_TRUE(d->chosen);
  EXPECT_EQ(d->chosen_build()->version, "1.30.0");
  EXPECT_THAT(d->choice_reason, HasSubstr("first of equals in search order"));
}

TEST(RuntimeDiscoveryTest, BadCandidatesAreSkippedAndTheRestStillLoad) {
  auto dir = test::make_temp_dir("rung-mixed");
  fs::create_directories(dir / "a-broken");
  std::ofstream(dir / "a-broken" / "libonnxruntime.so") << "not a library";
  fs::create_directories(dir / "b-good");
  fs::copy_file(library_of("1.28.2"), dir / "b-good" / "libonnxruntime.so");
  auto d = discover_runtimes(only(dir), Hardware{});
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ(d->builds.size(), 2u);
  const auto& good = d->builds[0].loaded ? d->builds[0] : d->builds[1];
  const auto& bad = d->builds[0].loaded ? d->builds[1] : d->builds[0];
  EXPECT_EQ(good.version, "1.28.2");
  EXPECT_FALSE(bad.loaded);
  EXPECT_THAT(bad.skipped_reason, HasSubstr("a-broken/libonnxruntime.so"));
  EXPECT_EQ(d->chosen_build()->version, "1.28.2");
  fs::remove_all(dir);
}

TEST(RuntimeDiscoveryTest, NothingUsableListsWhatWasSearchedAndHowToFetch) {
  auto dir = test::make_temp_dir("rung-none");
  fs::create_directories(dir / "x");
  std::ofstream(dir / "x" / "libonnxruntime.so.1") << "junk";
  auto d = discover_runtimes(only(dir), Hardware{});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ErrorCode::kNoRuntime);
  EXPECT_THAT(d.error().message, HasSubstr("no usable ONNX Runtime build"));
  EXPECT_THAT(d.error().message, HasSubstr("searched " + dir.string()));
  EXPECT_THAT(d.error().message, HasSubstr("tools/fetch-deps.sh"));
  fs::remove_all(dir);
}

TEST(RuntimeDiscoveryTest, EnvironmentDirectoryWinsOutright) {
  ScopedEnv env("RUNG_ORT_DIR", test::runtime_dir("1.28.2").c_str());
  RuntimeSearchOptions o = only(test::deps_dir() / "runtimes");
  o.read_environment = true;
  auto d = discover_runtimes(o, Hardware{});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->chosen_build()->version, "1.28.2");
  EXPECT_EQ(d->chosen_build()->origin, SearchOrigin::kEnvironment);
  EXPECT_EQ(d->choice_reason, "RUNG_ORT_DIR wins outright");
}

struct BadEnvCase {
  const char* name;
  std::string value;
  const char* expected;
};

class BadEnvironmentTest : public ::testing::TestWithParam<BadEnvCase> {};

TEST_P(BadEnvironmentTest, IsAnErrorNamingIt) {
  auto c = GetParam();
  ScopedEnv env("RUNG_ORT_DIR", c.value.c_str());
  RuntimeSearchOptions o;
  o.include_default_locations = false;
  auto d = discover_runtimes(o, Hardware{});
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, ErrorCode::kNoRuntime);  // exit 3 in every command, never another build
  EXPECT_THAT(d.error().message, HasSubstr("RUNG_ORT_DIR"));
  EXPECT_THAT(d.error().message, HasSubstr(c.expected));
}

INSTANTIATE_TEST_SUITE_P(RungOrtDir, BadEnvironmentTest,
                         ::testing::Values(BadEnvCase{"Relative", "runtimes/onnxruntime-1.30.0", "is a relative path"},
                                           BadEnvCase{"Missing", "/nonexistent/rung/ort", "does not exist"},
                                           BadEnvCase{"Empty", "", "is set but empty"},
                                           BadEnvCase{"HoldsNoBuild", "/usr/share/doc", "holds no libonnxruntime.so"}),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace rung
