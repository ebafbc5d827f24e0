// What is really missing when a rung cannot load: the ELF dynamic section read
// without loading, dependencies resolved as the loader would, the library table's
// words, and the same words from the loader's own error. Fake libraries
// (tests/fake-libraries) stand in for the drivers, toolkits and providers; the
// loader's system paths are left out (LoaderPaths{}), so what this machine has
// installed cannot change an answer.
#include <dlfcn.h>
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "rungs/libraries.h"
#include "os/elf_dynamic.h"
#include "os/loader_search.h"
#include "runtime/clean_error.h"
#include "runtime/dependencies.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

fs::path fakes() { return test::fake_libraries_dir(); }

std::vector<std::string> names_of(const std::vector<ResolvedLibrary>& libs) {
  std::vector<std::string> out;
  for (const auto& l : libs) out.push_back(l.name);
  return out;
}

const ResolvedLibrary* find(const std::vector<ResolvedLibrary>& libs, const std::string& name) {
  for (const auto& l : libs) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// ---- The ELF dynamic section --------------------------------------------------

TEST(ElfDynamicTest, ReadsNeededSonameAndRunpathInTheFilesOrder) {
  auto elf = read_elf_dynamic(fakes() / "ort-1.30.0" / "libonnxruntime_providers_cuda.so");
  ASSERT_TRUE(elf) << elf.error().message;
  EXPECT_EQ(elf->elf_class, ELFCLASS64);
  EXPECT_EQ(elf->soname, "libonnxruntime_providers_cuda.so");
  EXPECT_THAT(elf->needed, ElementsAre("libcublas.so.13", "libcudart.so.13", "libcudnn.so.9", "libcuda.so.1"));
  EXPECT_THAT(elf->runpath, ElementsAre("$ORIGIN/vendor"));
  EXPECT_THAT(elf->rpath, IsEmpty());
}

TEST(ElfDynamicTest, ReadsTheRealCoreLibrarysNeedsAndSymbolVersions) {
  auto elf = read_elf_dynamic(test::runtime_dir("1.30.0") / "libonnxruntime.so.1");
  ASSERT_TRUE(elf) << elf.error().message;
  EXPECT_EQ(elf->soname, "libonnxruntime.so.1");
  EXPECT_THAT(elf->needed, ::testing::Contains("libc.so.6"));
  auto libc = std::find_if(elf->version_needs.begin(), elf->version_needs.end(), [](const VersionNeed& v) { return v.file == "libc.so.6"; });
  ASSERT_NE(libc, elf->version_needs.end());
  EXPECT_THAT(libc->versions, ::testing::Contains("GLIBC_2.2.5"));
}

TEST(ElfDynamicTest, SymbolVersionsDefinedAndNeeded) {
  auto lib = read_elf_dynamic(fakes() / "vendor" / "libversioned.so.1");
  ASSERT_TRUE(lib) << lib.error().message;
  EXPECT_THAT(lib->version_definitions, ::testing::Contains("VERS_2"));
  auto old = read_elf_dynamic(fakes() / "vendor-old" / "libversioned.so.1");
  ASSERT_TRUE(old);
  EXPECT_THAT(old->version_definitions, ::testing::Not(::testing::Contains("VERS_2")));
  auto user = read_elf_dynamic(fakes() / "versioned" / "libneeds_versioned.so");
  ASSERT_TRUE(user);
  ASSERT_EQ(user->version_needs.size(), 1u);
  EXPECT_EQ(user->version_needs[0].file, "libversioned.so.1");
  EXPECT_THAT(user->version_needs[0].versions, ElementsAre("VERS_2"));
}

TEST(ElfDynamicTest, TextTruncatedAndEmptyFilesAreErrorsNotCrashes) {
  auto dir = test::make_temp_dir("rung-elf");
  std::ofstream(dir / "text.so") << "not a library";
  std::ofstream(dir / "empty.so");
  std::string bytes = test::read_file(fakes() / "vendor" / "libcuda.so.1");
  for (std::size_t keep : {std::size_t{4}, std::size_t{64}, std::size_t{200}, bytes.size() / 2}) {
    std::ofstream(dir / "cut.so", std::ios::binary) << bytes.substr(0, keep);
    auto r = read_elf_dynamic(dir / "cut.so");
    if (r) {
      EXPECT_THAT(r->needed, IsEmpty()) << keep;  // whatever survives must not be invented
    }
  }
  auto text = read_elf_dynamic(dir / "text.so");
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message, HasSubstr("not an ELF file"));
  EXPECT_FALSE(read_elf_dynamic(dir / "empty.so"));
  EXPECT_FALSE(read_elf_dynamic(dir / "absent.so"));
  fs::remove_all(dir);
}

TEST(ElfDynamicTest, ExportedSymbolsAreReadFromTheFile) {
  EXPECT_TRUE(elf_exports_symbol(fakes() / "plugin" / "librung_fake_ep.so", "CreateEpFactories"));
  EXPECT_TRUE(elf_exports_symbol(test::sim_ep_path(), "CreateEpFactories"));
  EXPECT_FALSE(elf_exports_symbol(fakes() / "vendor" / "libcuda.so.1", "CreateEpFactories"));
  // Hidden by the version script: defined, not exported.
  EXPECT_FALSE(elf_exports_symbol(fakes() / "vendor" / "libversioned.so.1", "fake_library_marker"));
  EXPECT_TRUE(elf_exports_symbol(fakes() / "vendor" / "libversioned.so.1", "versioned_function"));
}

TEST(ElfDynamicTest, ProviderVersionIsTheOneOnnxRuntimeCompiledIn) {
  EXPECT_EQ(provider_onnxruntime_version(fakes() / "ort-1.29.0" / "libonnxruntime_providers_cuda.so", "1.30.0"), "1.29.0");
  EXPECT_EQ(provider_onnxruntime_version(fakes() / "ort-1.30.0" / "libonnxruntime_providers_cuda.so", "1.30.0"), "1.30.0");
  // A library with no such string says nothing.
  EXPECT_EQ(provider_onnxruntime_version(fakes() / "vendor" / "libcuda.so.1", "1.30.0"), "");
  // The real cores carry their own version the same way.
  EXPECT_EQ(provider_onnxruntime_version(test::runtime_dir("1.28.2") / "libonnxruntime.so", "1.30.0"), "1.28.2");
}

// ---- ld.so.cache ---------------------------------------------------------------

// ldconfig writing a cache for a directory of fakes, in the format asked for.
fs::path make_cache(const fs::path& dir, const std::string& format) {
  std::ofstream(dir / "ld.so.conf") << (fakes() / "vendor").string() << "\n";
  auto r = test::run_command("/sbin/ldconfig -X -c " + format + " -C '" + (dir / "ld.so.cache").string() + "' -f '" +
                             (dir / "ld.so.conf").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir / "ld.so.cache";
}

TEST(LdCacheTest, ReadsTheNewAndTheCompatFormats) {
  auto dir = test::make_temp_dir("rung-ldcache");
  for (const std::string format : {"new", "compat"}) {
    auto cache = read_ld_cache(make_cache(dir, format));
    ASSERT_TRUE(cache) << format << ": " << cache.error().message;
    auto it = std::find_if(cache->begin(), cache->end(), [](const auto& e) { return e.first == "libcuda.so.1"; });
    ASSERT_NE(it, cache->end()) << format;
    EXPECT_EQ(it->second, fakes() / "vendor" / "libcuda.so.1") << format;
  }
  std::ofstream(dir / "junk") << "glibc-ld.so.cache1.1 but nothing after";
  EXPECT_FALSE(read_ld_cache(dir / "junk"));
  EXPECT_FALSE(read_ld_cache(dir / "absent"));
  fs::remove_all(dir);
}

TEST(LdCacheTest, ThisMachinesCacheHoldsTheCLibrary) {
  auto cache = read_ld_cache("/etc/ld.so.cache");
  ASSERT_TRUE(cache) << cache.error().message;
  EXPECT_TRUE(std::any_of(cache->begin(), cache->end(), [](const auto& e) { return e.first == "libc.so.6"; }));
}

// ---- Resolving as the loader does ----------------------------------------------

class ResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-resolve");
    core_ = test::make_fake_gpu_runtime(dir_, "1.30.0", {"libonnxruntime_providers_cuda.so"});
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path cuda() const { return dir_ / "libonnxruntime_providers_cuda.so"; }

  fs::path dir_, core_;
};

TEST_F(ResolverTest, BreadthFirstThroughRunpathWithOrigin) {
  auto libs = resolve_dependencies(cuda(), LoaderPaths{});
  ASSERT_TRUE(libs) << libs.error().message;
  EXPECT_THAT(names_of(*libs), ElementsAre("libcublas.so.13", "libcudart.so.13", "libcudnn.so.9", "libcuda.so.1", "libcublasLt.so.13"));
  for (const auto& l : *libs) EXPECT_EQ(l.path, dir_ / "vendor" / l.name) << l.name;
  // libcublasLt.so.13 through libcublas.so.13's own RUNPATH ($ORIGIN), not the provider's.
  EXPECT_EQ(find(*libs, "libcublasLt.so.13")->needed_by, "libcublas.so.13");
}

TEST_F(ResolverTest, LibraryPathComesBeforeRunpathAndCacheBeforeSystemDirs) {
  auto other = dir_ / "elsewhere";
  fs::create_directories(other);
  fs::copy_file(dir_ / "vendor" / "libcuda.so.1", other / "libcuda.so.1");
  LoaderPaths paths;
  paths.library_path = {other};
  EXPECT_EQ(find(*resolve_dependencies(cuda(), paths), "libcuda.so.1")->path, other / "libcuda.so.1");

  fs::remove(dir_ / "vendor" / "libcuda.so.1");
  auto system = dir_ / "system";
  fs::create_directories(system);
  fs::copy_file(other / "libcuda.so.1", system / "libcuda.so.1");
  paths = LoaderPaths{};
  paths.system_dirs = {system};
  EXPECT_EQ(find(*resolve_dependencies(cuda(), paths), "libcuda.so.1")->path, system / "libcuda.so.1");
  paths.cache = {{"libcuda.so.1", other / "libcuda.so.1"}};
  EXPECT_EQ(find(*resolve_dependencies(cuda(), paths), "libcuda.so.1")->path, other / "libcuda.so.1");
}

TEST_F(ResolverTest, RpathComesBeforeLibraryPathUnlikeRunpath) {
  auto other = dir_ / "elsewhere";
  fs::create_directories(other);
  fs::copy_file(dir_ / "vendor" / "libcuda.so.1", other / "libcuda.so.1");
  fs::copy_file(fakes() / "rpath" / "librpath_user.so", dir_ / "librpath_user.so");
  ASSERT_THAT(read_elf_dynamic(dir_ / "librpath_user.so")->rpath, ElementsAre("$ORIGIN/vendor"));
  LoaderPaths paths;
  paths.library_path = {other};
  EXPECT_EQ(find(*resolve_dependencies(dir_ / "librpath_user.so", paths), "libcuda.so.1")->path, dir_ / "vendor" / "libcuda.so.1");
  EXPECT_EQ(find(*resolve_dependencies(cuda(), paths), "libcuda.so.1")->path, other / "libcuda.so.1");
}

TEST_F(ResolverTest, AnObjectAlreadyLoadedSatisfiesItsNameAndIsNotWalked) {
  fs::remove(dir_ / "vendor" / "libcublas.so.13");
  auto libs = resolve_dependencies(cuda(), LoaderPaths{}, {{"libcublas.so.13", fakes() / "vendor" / "libcublas.so.13"}});
  ASSERT_TRUE(libs);
  EXPECT_TRUE(find(*libs, "libcublas.so.13")->already_loaded);
  EXPECT_TRUE(find(*libs, "libcublas.so.13")->found());
  EXPECT_EQ(find(*libs, "libcublasLt.so.13"), nullptr);
}

TEST_F(ResolverTest, MissingLibrariesAreNamedWithTheOtherVersionsOnThePath) {
  fs::remove(dir_ / "vendor" / "libcudart.so.13");
  auto libs = resolve_dependencies(cuda(), LoaderPaths{});
  const auto* cudart = find(*libs, "libcudart.so.13");
  EXPECT_FALSE(cudart->found());
  EXPECT_THAT(cudart->other_versions, ElementsAre("libcudart.so.12"));
  EXPECT_TRUE(find(*libs, "libcuda.so.1")->found());
}

TEST_F(ResolverTest, AFileForAnotherMachineIsSkippedAndAFileThatIsNotElfStopsTheSearch) {
  auto cuda_stub = dir_ / "vendor" / "libcuda.so.1";
  std::string bytes = test::read_file(cuda_stub);
  std::uint16_t aarch64 = EM_AARCH64;
  std::memcpy(bytes.data() + offsetof(Elf64_Ehdr, e_machine), &aarch64, sizeof aarch64);
  fs::remove(cuda_stub);
  std::ofstream(cuda_stub, std::ios::binary) << bytes;
  auto libs = resolve_dependencies(cuda(), LoaderPaths{});
  const auto* driver = find(*libs, "libcuda.so.1");
  EXPECT_FALSE(driver->found());
  EXPECT_THAT(driver->other_architecture, ElementsAre(cuda_stub));

  std::ofstream(cuda_stub, std::ios::trunc) << "text";
  libs = resolve_dependencies(cuda(), LoaderPaths{});
  EXPECT_EQ(find(*libs, "libcuda.so.1")->path, cuda_stub);
  EXPECT_EQ(find(*libs, "libcuda.so.1")->unusable, "not an ELF file");
}

TEST(ResolverVersionsTest, ASymbolVersionTheFoundLibraryLacksIsNamed) {
  auto dir = test::make_temp_dir("rung-versions");
  fs::copy_file(fakes() / "versioned" / "libneeds_versioned.so", dir / "libneeds_versioned.so");
  fs::create_directories(dir / "vendor");
  fs::copy_file(fakes() / "vendor" / "libversioned.so.1", dir / "vendor" / "libversioned.so.1");
  auto libs = resolve_dependencies(dir / "libneeds_versioned.so", LoaderPaths{});
  ASSERT_TRUE(libs);
  EXPECT_THAT((*libs)[0].missing_versions, IsEmpty());
  EXPECT_TRUE((*libs)[0].loads());
  fs::copy_file(fakes() / "vendor-old" / "libversioned.so.1", dir / "vendor" / "libversioned.so.1",
                fs::copy_options::overwrite_existing);
  libs = resolve_dependencies(dir / "libneeds_versioned.so", LoaderPaths{});
  EXPECT_THAT((*libs)[0].missing_versions, ElementsAre("VERS_2"));
  EXPECT_TRUE((*libs)[0].found());
  EXPECT_FALSE((*libs)[0].loads()) << "found, but the loader refuses a library lacking a symbol version its requester needs";
  fs::remove_all(dir);
}

// What a warm launch asks before it trusts a record over opening the build: every
// dependency loads. Each way of not loading alone.
TEST(ResolverVersionsTest, ALibraryLoadsOnlyFoundUsableAndDefiningEveryVersionNeeded) {
  ResolvedLibrary at_path;
  at_path.name = "libx.so.1";
  at_path.path = "/opt/x/libx.so.1";
  EXPECT_TRUE(at_path.loads());
  ResolvedLibrary held;
  held.already_loaded = true;
  EXPECT_TRUE(held.loads());
  ResolvedLibrary nowhere = at_path;
  nowhere.path.clear();
  EXPECT_FALSE(nowhere.loads());
  ResolvedLibrary unusable = at_path;
  unusable.unusable = "not an ELF file";
  EXPECT_FALSE(unusable.loads());
  ResolvedLibrary lacking = at_path;
  lacking.missing_versions = {"VERS_2"};
  EXPECT_FALSE(lacking.loads());
  ResolvedLibrary elsewhere = at_path;
  elsewhere.other_architecture = {"/opt/arm/libx.so.1"};  // skipped on the way to the one found: still loads
  EXPECT_TRUE(elsewhere.loads());
}

// ---- The library table ----------------------------------------------------------

TEST(LibraryTableTest, NamesWhatEachLibraryIs) {
  EXPECT_EQ(identify_library("libcuda.so.1").what, "the NVIDIA driver");
  EXPECT_TRUE(identify_library("libcuda.so.1").driver);
  EXPECT_EQ(identify_library("libcudart.so.13").what, "CUDA 13");
  EXPECT_EQ(identify_library("libcublas.so.12").what, "CUDA 12's cuBLAS");
  EXPECT_EQ(identify_library("libcurand.so.10").what, "the CUDA toolkit's cuRAND 10");
  EXPECT_EQ(identify_library("libcudnn_graph.so.9").product, "cuDNN 9");
  EXPECT_EQ(identify_library("libnvonnxparser.so.10").what, "TensorRT 10's ONNX parser");
  EXPECT_EQ(identify_library("libnvinfer_plugin.so.10").product, "TensorRT 10");
  EXPECT_EQ(identify_library("libamdhip64.so.6").product, "ROCm 6");
  EXPECT_EQ(identify_library("libmigraphx_c.so.3").product, "MIGraphX");
  EXPECT_EQ(identify_library("libopenvino.so.2541").product, "OpenVINO 2025.4.1");
  EXPECT_EQ(identify_library("libopenvino_onnx_frontend.so.2460").product, "OpenVINO 2024.6.0");
  EXPECT_EQ(identify_library("libQnnHtpV73Stub.so").product, "the Qualcomm QNN runtime");
  EXPECT_TRUE(identify_library("libcdsprpc.so").driver);
  EXPECT_EQ(identify_library("libonnxruntime_providers_cuda.so").what, "ONNX Runtime's CUDA provider");
  EXPECT_EQ(identify_library("libonnxruntime_providers_shared.so").what, "ONNX Runtime's provider bridge");
  // Unknown: named as it is.
  EXPECT_FALSE(identify_library("libfoo.so.3").known);
  EXPECT_EQ(identify_library("libfoo.so.3").what, "libfoo.so.3");
  EXPECT_EQ(identify_library("libcudaX.so.1").what, "libcudaX.so.1");
}

TEST(LibraryTableTest, MissingFilesOfOneProductAreOneClause) {
  EXPECT_EQ(missing_libraries_words({"libcuda.so.1"}), "the NVIDIA driver (libcuda.so.1) is not installed");
  EXPECT_EQ(missing_libraries_words({"libnvinfer.so.10", "libcudnn.so.9", "libnvonnxparser.so.10"}),
            "TensorRT 10 (libnvinfer.so.10, libnvonnxparser.so.10) not found; cuDNN 9 (libcudnn.so.9) not found");
  EXPECT_EQ(missing_libraries_words({"libfoo.so.3", "libbar.so"}), "libfoo.so.3 not found; libbar.so not found");
  EXPECT_EQ(other_version_words("libcudart.so.13", "libcudart.so.12"),
            "found libcudart.so.12 (CUDA 12), but this build needs CUDA 13 (libcudart.so.13)");
  EXPECT_EQ(other_version_words("libfoo.so.3", "libfoo.so.2"), "found libfoo.so.2, but this build needs libfoo.so.3");
}

// ---- A rung's dependencies, in words -------------------------------------------

RungSpec plugin(const fs::path& library) { return plugin_rung("rung_fake_ep", library.string()); }

class RungDependenciesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-deps"); }
  void TearDown() override { fs::remove_all(dir_); }

  // The runtime directory with these provider files, from ONNX Runtime `version`.
  void make(const std::string& version, const std::vector<std::string>& providers) {
    build_.library = test::make_fake_gpu_runtime(dir_, version, providers);
    build_.version = "1.30.0";
  }
  RungDependencies check(const std::string& rung) { return check_rung_dependencies(*find_rung(rung), build_, LoaderPaths{}); }
  void remove(const std::string& vendor_file) { fs::remove(dir_ / "vendor" / vendor_file); }

  fs::path dir_;
  RuntimeBuild build_;
};

TEST_F(RungDependenciesTest, EverythingPresentAndTheSameVersionIsReady) {
  make("1.30.0", {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so"});
  for (const char* rung : {"cuda", "tensorrt"}) {
    auto d = check(rung);
    EXPECT_THAT(d.problems, IsEmpty()) << rung << ": " << d.words();
    EXPECT_FALSE(d.certain_to_fail);
    EXPECT_EQ(d.provider_version, "1.30.0");
  }
}

TEST_F(RungDependenciesTest, EachNvidiaLibraryMissingIsNamedForAPerson) {
  make("1.30.0", {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so"});
  struct Case {
    std::vector<std::string> removed;
    std::string rung, words;
  };
  const std::vector<Case> cases = {
      {{"libcuda.so.1"}, "cuda", "the NVIDIA driver (libcuda.so.1) is not installed"},
      {{"libnvinfer.so.10"}, "tensorrt", "TensorRT 10 (libnvinfer.so.10) not found"},
      {{"libnvinfer.so.10", "libnvonnxparser.so.10"}, "tensorrt", "TensorRT 10 (libnvinfer.so.10, libnvonnxparser.so.10) not found"},
      {{"libcudnn.so.9", "libcudnn.so.8"}, "cuda", "cuDNN 9 (libcudnn.so.9) not found"},
      {{"libcudnn.so.9"}, "cuda", "found libcudnn.so.8 (cuDNN 8), but this build needs cuDNN 9 (libcudnn.so.9)"},
      {{"libcudart.so.13"}, "cuda", "found libcudart.so.12 (CUDA 12), but this build needs CUDA 13 (libcudart.so.13)"},
      {{"libcublasLt.so.13"}, "cuda", "CUDA 13 (libcublasLt.so.13) not found, needed by libcublas.so.13"},
      {{"libcuda.so.1", "libcudnn.so.9", "libcudnn.so.8"}, "cuda",
       "cuDNN 9 (libcudnn.so.9) not found; the NVIDIA driver (libcuda.so.1) is not installed"},
  };
  for (const auto& c : cases) {
    for (const auto& f : c.removed) fs::rename(dir_ / "vendor" / f, dir_ / (f + ".away"));
    auto d = check(c.rung);
    EXPECT_EQ(d.words(), c.words) << "removed " << c.removed.front();
    EXPECT_FALSE(d.certain_to_fail) << "the probe still decides";
    for (const auto& f : c.removed) fs::rename(dir_ / (f + ".away"), dir_ / "vendor" / f);
  }
}

TEST_F(RungDependenciesTest, NoMessageSaysAFileIsMissingWhenItIsPresent) {
  // One vendor library away at a time: the words name it, and no file that is there.
  make("1.30.0", {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so"});
  std::vector<std::string> vendor;
  for (const auto& e : fs::directory_iterator(dir_ / "vendor")) vendor.push_back(e.path().filename().string());
  for (const auto& away : vendor) {
    fs::rename(dir_ / "vendor" / away, dir_ / "away");
    for (const char* rung : {"cuda", "tensorrt"}) {
      const std::string words = check(rung).words();
      for (const auto& present : vendor) {
        if (present == away) continue;
        EXPECT_THAT(words, ::testing::Not(HasSubstr(present + ")"))) << rung << " without " << away;
        EXPECT_THAT(words, ::testing::Not(HasSubstr(present + " not found"))) << rung << " without " << away;
      }
    }
    fs::rename(dir_ / "away", dir_ / "vendor" / away);
  }
}

TEST_F(RungDependenciesTest, OtherVendorsAndPluginsToo) {
  make("1.30.0", {"libonnxruntime_providers_migraphx.so", "libonnxruntime_providers_openvino.so"});
  fs::copy_file(fakes() / "qnn" / "libQnnHtp.so", dir_ / "libQnnHtp.so");
  struct Case {
    std::string removed, rung, words;
  };
  const std::vector<Case> cases = {
      {"libamdhip64.so.6", "migraphx", "ROCm 6 (libamdhip64.so.6) not found"},
      {"libmigraphx_c.so.3", "migraphx", "MIGraphX (libmigraphx_c.so.3) not found"},
      {"libopenvino.so.2541", "openvino", "OpenVINO 2025.4.1 (libopenvino.so.2541) not found"},
      {"libtbb.so.12", "openvino", "oneTBB 12 (libtbb.so.12) not found"},
      {"libcdsprpc.so", "qnn-htp", "the Qualcomm FastRPC driver (libcdsprpc.so) is not installed"},
      {"libQnnSystem.so", "qnn-htp", "the Qualcomm QNN runtime (libQnnSystem.so) not found"},
  };
  for (const auto& c : cases) {
    remove(c.removed);
    EXPECT_EQ(check(c.rung).words(), c.words) << c.removed;
    fs::copy_file(fakes() / "vendor" / c.removed, dir_ / "vendor" / c.removed);
    EXPECT_EQ(check(c.rung).words(), "") << c.removed;
  }
  // A plugin EP's own dependency, unknown to the table: named as it is.
  fs::create_directories(dir_ / "plugins");
  fs::copy_file(fakes() / "plugin" / "librung_fake_ep.so", dir_ / "plugins" / "librung_fake_ep.so");
  auto d = check_rung_dependencies(plugin(dir_ / "plugins" / "librung_fake_ep.so"), build_, LoaderPaths{});
  EXPECT_EQ(d.words(), "librung_ep_helper.so.2 not found");
  fs::copy(dir_ / "vendor", dir_ / "plugins" / "vendor", fs::copy_options::recursive);
  d = check_rung_dependencies(plugin(dir_ / "plugins" / "librung_fake_ep.so"), build_, LoaderPaths{});
  EXPECT_EQ(d.words(), "");
  EXPECT_EQ(d.provider_version, "") << "a plugin EP speaks the stable API: no version to match";
}

TEST_F(RungDependenciesTest, ProvidersFromAnotherOnnxRuntimeAreNamedAndNeverLoaded) {
  make("1.29.0", {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so"});
  auto d = check("cuda");
  EXPECT_EQ(d.provider_version, "1.29.0");
  EXPECT_EQ(d.words(), "provider from ONNX Runtime 1.29.0 beside the 1.30.0 core");
  EXPECT_TRUE(d.certain_to_fail);
  remove("libcuda.so.1");
  remove("libnvinfer.so.10");
  EXPECT_EQ(check("cuda").words(),
            "the NVIDIA driver (libcuda.so.1) is not installed; provider from ONNX Runtime 1.29.0 beside the 1.30.0 core");
  EXPECT_EQ(check("tensorrt").words(), "TensorRT 10 (libnvinfer.so.10) not found; provider from ONNX Runtime 1.29.0 beside the 1.30.0 core");
}

TEST_F(RungDependenciesTest, AbsentProviderFilesAndAFileOffTheLoadersPath) {
  make("1.30.0", {"libonnxruntime_providers_cuda.so"});
  auto trt = check("tensorrt");
  EXPECT_EQ(trt.words(), "ONNX Runtime's TensorRT provider (libonnxruntime_providers_tensorrt.so) is not beside libonnxruntime.so.1");
  EXPECT_TRUE(trt.certain_to_fail);
  fs::remove(dir_ / "libonnxruntime_providers_shared.so");
  EXPECT_EQ(check("cuda").words(), "ONNX Runtime's provider bridge (libonnxruntime_providers_shared.so) is not beside libonnxruntime.so.1");
  fs::copy_file(test::runtime_dir("1.29") / "libonnxruntime_providers_shared.so", dir_ / "libonnxruntime_providers_shared.so");
  // Beside the provider, where a person would look, but not where the loader looks.
  fs::rename(dir_ / "vendor" / "libcuda.so.1", dir_ / "libcuda.so.1");
  EXPECT_EQ(check("cuda").words(), "the NVIDIA driver (libcuda.so.1) is in " + dir_.string() + " but not on the loader's search path");
}

// ---- The loader's own words, cleaned, match ---------------------------------------

TEST(CleanErrorTest, TheLoadersErrorNamesWhatIsReallyMissing) {
  auto say = [](const std::string& library, const std::string& dlerror) {
    return clean_error("Failed to load library " + library + " with error: " + dlerror);
  };
  EXPECT_EQ(say("/rt/libonnxruntime_providers_cuda.so", "libcuda.so.1: cannot open shared object file: No such file or directory"),
            "the NVIDIA driver (libcuda.so.1) is not installed");
  EXPECT_EQ(say("/rt/libonnxruntime_providers_tensorrt.so", "libnvinfer.so.10: cannot open shared object file: No such file or directory"),
            "TensorRT 10 (libnvinfer.so.10) not found");
  EXPECT_EQ(say("libonnxruntime_providers_shared.so",
                "libonnxruntime_providers_shared.so: cannot open shared object file: No such file or directory"),
            "ONNX Runtime's provider bridge (libonnxruntime_providers_shared.so) not found");
  EXPECT_EQ(say("/rt/p.so", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /rt/p.so)"),
            "found libstdc++.so.6 (/usr/lib/x86_64-linux-gnu/libstdc++.so.6), but it lacks GLIBCXX_3.4.32 that p.so needs");
  EXPECT_EQ(say("/rt/p.so", "libcudnn.so.9: cannot open shared object file: Permission denied"),
            "cuDNN 9 (libcudnn.so.9) cannot be opened: Permission denied");
  EXPECT_EQ(say("/rt/p.so", "/rt/p.so: undefined symbol: Provider_GetHost"), "/rt/p.so: undefined symbol: Provider_GetHost");
}

TEST(CleanErrorTest, AMissingLibraryIsToldApartFromOtherFailures) {
  for (const char* missing : {"the NVIDIA driver (libcuda.so.1) is not installed", "TensorRT 10 (libnvinfer.so.10, libnvonnxparser.so.10) not found",
                              "ONNX Runtime's provider bridge (libonnxruntime_providers_shared.so) not found",
                              "ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) is not beside libonnxruntime.so.1",
                              "found libcudart.so.12 (CUDA 12), but this build needs CUDA 13 (libcudart.so.13)",
                              "librung_ep_helper.so.2 not found"}) {
    EXPECT_TRUE(reason_is_missing_library(missing)) << missing;
  }
  for (const char* other : {"Failed to get a WebGPU adapter: No supported adapters", "RungSimAccelerator: simulated failure at compile",
                            "provider from ONNX Runtime 1.29.0 beside the 1.30.0 core", "model.onnx not found"}) {
    EXPECT_FALSE(reason_is_missing_library(other)) << other;
  }
}

// dlopen's own error for a fake, as ONNX Runtime wraps it, cleaned: the same words
// as the check that never loaded it.
std::string loader_says(const fs::path& library) {
  void* h = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) {
    ::dlclose(h);
    return "loaded";
  }
  return clean_error("Failed to load library " + library.string() + " with error: " + ::dlerror());
}

TEST_F(RungDependenciesTest, TheLoadersWordsAndTheChecksAgree) {
  make("1.30.0", {"libonnxruntime_providers_tensorrt.so"});
  fs::create_directories(dir_ / "plugins");
  fs::copy_file(fakes() / "plugin" / "librung_fake_ep.so", dir_ / "plugins" / "librung_fake_ep.so");
  EXPECT_EQ(loader_says(dir_ / "plugins" / "librung_fake_ep.so"), "librung_ep_helper.so.2 not found");
  EXPECT_EQ(check_rung_dependencies(plugin(dir_ / "plugins" / "librung_fake_ep.so"), build_).words(), "librung_ep_helper.so.2 not found");

  remove("libnvinfer.so.10");
  remove("libnvonnxparser.so.10");
  if (auto system = resolve_dependencies(dir_ / "libonnxruntime_providers_tensorrt.so", LoaderPaths::of_this_process());
      system && find(*system, "libnvinfer.so.10")->found()) {
    GTEST_SKIP() << "this machine has TensorRT 10 installed";
  }
  EXPECT_EQ(loader_says(dir_ / "libonnxruntime_providers_tensorrt.so"), "TensorRT 10 (libnvinfer.so.10) not found");
  EXPECT_THAT(check_rung_dependencies(*find_rung("tensorrt"), build_).words(), ::testing::StartsWith("TensorRT 10 (libnvinfer.so.10"));
}

TEST(BriefReasonTest, ALongReasonIsCutAfterAWholeClause) {
  std::string a(100, 'a'), b(100, 'b');
  EXPECT_EQ(brief_reason(a + "; " + b), a + "; …");
  EXPECT_EQ(brief_reason("short; reason"), "short; reason");
}

}  // namespace
}  // namespace rung
