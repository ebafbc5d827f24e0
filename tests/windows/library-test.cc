// Windows under wine: the per-system library table and loader (src/os/windows/)
// against the real win32 ONNX Runtime 1.30.0 (onnxruntime-node's, DirectML.dll
// beside it), a real library for another machine (its win32/arm64 build), and
// damaged copies. Built by tools/build-windows.sh, run by ctest under wine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "os/dynamic_library.h"
#include "os/library_files.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace rung {
namespace {

const fs::path kDeps = RUNG_TEST_WINDOWS_DEPS;
const fs::path kRuntime = kDeps / "runtimes" / "onnxruntime-1.30.0" / "onnxruntime.dll";
const fs::path kArm64Runtime = kDeps / "arm64" / "onnxruntime-1.30.0" / "onnxruntime.dll";

std::vector<char> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class WindowsLibraries : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rung-windows-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& name, const std::vector<char>& bytes) {
    const fs::path out = dir_ / name;
    std::ofstream(out, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return out;
  }
  fs::path dir_;
};

TEST(WindowsLibraryNames, AStemIsADllAndBack) {
  EXPECT_EQ(library_file_name("onnxruntime"), "onnxruntime.dll");
  EXPECT_EQ(library_file_name("QnnHtp"), "QnnHtp.dll");
  EXPECT_EQ(library_stem("rung_sim_ep.dll"), "rung_sim_ep");
  EXPECT_EQ(library_stem("DirectML.DLL"), "DirectML");  // case does not matter in Windows file names
  EXPECT_EQ(library_stem("librung_sim_ep.so"), "librung_sim_ep.so");
  EXPECT_TRUE(is_library_file_name("onnxruntime.dll"));
  EXPECT_FALSE(is_library_file_name("libonnxruntime.so.1"));
  EXPECT_FALSE(is_library_file_name(".dll"));
  EXPECT_TRUE(is_library_file_of("onnxruntime.dll", "onnxruntime"));
  EXPECT_FALSE(is_library_file_of("onnxruntime_providers_shared.dll", "onnxruntime"));
}

TEST_F(WindowsLibraries, TheRealRuntimeIsWholeExportsItsEntryAndLoads) {
  ASSERT_TRUE(fs::exists(kRuntime)) << kRuntime.string() << ": run tools/fetch-deps.sh --windows";
  EXPECT_EQ(library_file_problem(kRuntime), "");
  EXPECT_TRUE(library_exports_symbol(kRuntime, "OrtGetApiBase"));
  EXPECT_FALSE(library_exports_symbol(kRuntime, "CreateEpFactories"));
  EXPECT_FALSE(library_exports_symbol(kRuntime, "OrtGetApiBas"));  // a prefix is not the name

  std::string why;
  DynamicLibrary lib = open_library(kRuntime, why);
  ASSERT_TRUE(lib) << why;
  using GetApiBase = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBase>(find_symbol(lib, "OrtGetApiBase"));
  ASSERT_NE(get_base, nullptr);
  const OrtApiBase* base = get_base();
  ASSERT_NE(base, nullptr);
  EXPECT_STREQ(base->GetVersionString(), "1.30.0");
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  ASSERT_NE(api, nullptr);
  char** providers = nullptr;
  int count = 0;
  ASSERT_EQ(api->GetAvailableProviders(&providers, &count), nullptr);
  std::vector<std::string> names(providers, providers + count);
  api->ReleaseAvailableProviders(providers, count);
  EXPECT_THAT(names, ::testing::Contains("DmlExecutionProvider"));
  EXPECT_THAT(names, ::testing::Contains("CPUExecutionProvider"));
  keep_loaded_forever(std::move(lib));
}

TEST_F(WindowsLibraries, ALibraryForAnotherMachineIsNamedAsSuch) {
  ASSERT_TRUE(fs::exists(kArm64Runtime)) << kArm64Runtime.string() << ": run tools/fetch-deps.sh --windows";
  EXPECT_EQ(library_file_problem(kArm64Runtime), "built for aarch64, not for this machine (x86_64)");
  // Its export table is still read: the check is about loading, not reading.
  EXPECT_TRUE(library_exports_symbol(kArm64Runtime, "OrtGetApiBase"));
}

TEST_F(WindowsLibraries, ATruncatedDllIsRefusedBeforeTheLoaderMapsIt) {
  auto head = bytes_of(kRuntime);
  ASSERT_GT(head.size(), 1u << 20);
  head.resize(64 * 1024);
  EXPECT_THAT(library_file_problem(write("onnxruntime.dll", head)), HasSubstr("truncated PE: a section ends at byte"));
  head.resize(300);  // inside the section table
  EXPECT_THAT(library_file_problem(write("short.dll", head)), HasSubstr("truncated PE"));
}

TEST_F(WindowsLibraries, AFakeDllIsLeftToTheLoaderWhichRefusesItAsAValue) {
  const fs::path fake = write("onnxruntime.dll", {'n', 'o', 't', ' ', 'a', ' ', 'D', 'L', 'L', '\n'});
  EXPECT_EQ(library_file_problem(fake), "");  // not PE at all: the loader's words are better
  EXPECT_FALSE(library_exports_symbol(fake, "OrtGetApiBase"));
  std::string why;
  DynamicLibrary lib = open_library(fake, why);
  EXPECT_FALSE(lib);
  EXPECT_THAT(why, HasSubstr("(error "));
  EXPECT_EQ(library_file_problem(dir_ / "absent.dll"), "cannot be read");
}

TEST_F(WindowsLibraries, AProgramIsNotALibrary) {
  // This test's own executable: whole, for this machine, but not a DLL.
  auto exe = bytes_of(fs::path(::testing::internal::GetArgvs().front()));
  ASSERT_FALSE(exe.empty());
  EXPECT_EQ(library_file_problem(write("program.dll", exe)), "a program, not a DLL");
}

TEST_F(WindowsLibraries, ARelativePathIsNeverLoaded) {
  std::string why;
  EXPECT_FALSE(open_library("onnxruntime.dll", why));
  EXPECT_THAT(why, HasSubstr("relative path"));
}

}  // namespace
}  // namespace rung
