// The one table of how this system names and checks shared libraries
// (os/library_files.h): names from stems and back, and the check a file gets
// before the loader maps it (another machine's library, a truncated one).
#include "os/library_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "os/machine.h"
#include "rung/ladder.h"
#include "rung/runtime.h"
#include "runtime/plugin_rungs.h"
#include "runtime/search.h"
#include "test_support.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace rung {
namespace {

TEST(LibraryFileNames, AStemBecomesThisSystemsFileNameAndBack) {
  EXPECT_EQ(library_file_name("QnnHtp"), "libQnnHtp.so");
  EXPECT_EQ(library_file_name("onnxruntime_providers_cuda"), "libonnxruntime_providers_cuda.so");
  EXPECT_EQ(library_stem("librung_sim_ep.so"), "rung_sim_ep");
  EXPECT_EQ(library_stem("libonnxruntime.so.1.30.0"), "onnxruntime");
  EXPECT_EQ(library_stem("rung_sim_ep.so"), "rung_sim_ep");  // no prefix: the name as it is
  EXPECT_EQ(library_stem("model.onnx"), "model.onnx");        // no library's name
}

TEST(LibraryFileNames, VersionsAreDigitsAndDotsAfterTheSuffix) {
  for (const char* yes : {"libx.so", "libx.so.1", "libx.so.1.30.0", "x.so"}) EXPECT_TRUE(is_library_file_name(yes)) << yes;
  for (const char* no : {".so", "libx.so.", "libx.so..1", "libx.so.1a", "libx.sox", "libx.so1", "libx.so12.0", "libx.s", "libx", "libx.so.1.", ""}) {
    EXPECT_FALSE(is_library_file_name(no)) << no;
  }
  EXPECT_TRUE(is_library_file_of("libonnxruntime.so", "onnxruntime"));
  EXPECT_TRUE(is_library_file_of("libonnxruntime.so.1.30.0", "onnxruntime"));
  EXPECT_FALSE(is_library_file_of("libonnxruntime_providers_cuda.so", "onnxruntime"));
  EXPECT_FALSE(is_library_file_of("onnxruntime.so", "onnxruntime"));
  EXPECT_FALSE(is_library_file_of("libonnxruntime.so.x", "onnxruntime"));
}

TEST(LibraryFileNames, SplitKeepsThePrefixAndTheWholeVersion) {
  auto cudart = split_library_file_name("libcudart.so.13.0.2");
  ASSERT_TRUE(cudart);
  EXPECT_EQ(cudart->base, "libcudart");
  EXPECT_EQ(cudart->version, "13.0.2");
  auto plain = split_library_file_name("libfoo.so");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->base, "libfoo");
  EXPECT_EQ(plain->version, "");
  EXPECT_FALSE(split_library_file_name("libfoo.txt"));
}

TEST(LibraryFileNames, TheLadderAndThePluginRulesSpeakThroughTheTable) {
  const RungSpec* cuda = find_rung("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->provider_libraries, (std::vector<std::string>{library_file_name("onnxruntime_providers_cuda"),
                                                                 library_file_name("onnxruntime_providers_shared")}));
  EXPECT_TRUE(names_a_plugin_library(library_file_name("rung_sim_ep")));
  EXPECT_TRUE(names_a_plugin_library("/opt/x/anything"));
  EXPECT_FALSE(names_a_plugin_library("webgpu"));
  EXPECT_EQ(plugin_rung_name("/opt/x/" + library_file_name("rung_sim_ep")), "rung_sim_ep");
}

class LibraryFileCheck : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-library-files"); }
  void TearDown() override { fs::remove_all(dir_); }
  // A copy of a real library with its header's machine field changed.
  fs::path with_machine(std::uint16_t machine) {
    std::ifstream in(test::sim_ep_path(), std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.at(18) = static_cast<char>(machine & 0xff);  // e_machine, little-endian, at byte 18 of an ELF header
    bytes.at(19) = static_cast<char>(machine >> 8);
    const fs::path out = dir_ / library_file_name("onnxruntime");
    std::ofstream(out, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return out;
  }
  fs::path dir_;
};

TEST_F(LibraryFileCheck, ARealLibraryForThisMachinePasses) {
  EXPECT_EQ(library_file_problem(test::sim_ep_path()), "");
  EXPECT_EQ(library_file_problem(*library_in(test::runtime_dir("1.30.0"))), "");
}

TEST_F(LibraryFileCheck, ExportsAreReadFromTheFile) {
  EXPECT_TRUE(library_exports_symbol(test::sim_ep_path(), "CreateEpFactories"));
  EXPECT_FALSE(library_exports_symbol(test::sim_ep_path(), "OrtGetApiBase"));
  EXPECT_TRUE(library_exports_symbol(*library_in(test::runtime_dir("1.30.0")), "OrtGetApiBase"));
  EXPECT_FALSE(library_exports_symbol(dir_ / "absent.so", "OrtGetApiBase"));
}

TEST_F(LibraryFileCheck, AnotherMachinesLibraryIsNamedAsSuch) {
  const bool on_arm = machine_architecture() == "aarch64";
  const auto other = with_machine(on_arm ? 62 : 183);  // EM_X86_64 : EM_AARCH64
  EXPECT_EQ(library_file_problem(other), fmt::format("built for {}, not for this machine ({})", on_arm ? "x86_64" : "aarch64", machine_architecture()));
  // Through the runtime loader: refused before the loader maps it, with the file and the reason.
  auto build = load_runtime_build(other);
  ASSERT_FALSE(build);
  EXPECT_EQ(build.error().code, ErrorCode::kLoadFailed);
  EXPECT_THAT(build.error().message, HasSubstr(other.string()));
  EXPECT_THAT(build.error().message, HasSubstr("not loadable: built for"));
  EXPECT_THAT(library_file_problem(with_machine(0x1234)), HasSubstr("built for ELF machine 4660"));
}

TEST_F(LibraryFileCheck, ATruncatedLibraryIsRefusedAndATooShortOneIsLeftToTheLoader) {
  std::ifstream in(test::sim_ep_path(), std::ios::binary);
  std::vector<char> head(4096);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const fs::path cut = dir_ / "cut.so";
  std::ofstream(cut, std::ios::binary).write(head.data(), in.gcount());
  EXPECT_THAT(library_file_problem(cut), HasSubstr("truncated ELF"));
  const fs::path tiny = dir_ / "tiny.so";
  std::ofstream(tiny, std::ios::binary) << "\x7f" "ELF";
  EXPECT_EQ(library_file_problem(tiny), "");
  EXPECT_EQ(library_file_problem(dir_ / "absent.so"), "cannot be read");
}

// Cut inside its program headers, a library is refused saying where they end;
// cut exactly where they end, they are whole and the segments are what is short.
TEST_F(LibraryFileCheck, ACutInsideTheProgramHeadersIsToldApartFromACutAfterThem) {
  std::ifstream in(test::sim_ep_path(), std::ios::binary);
  std::vector<char> whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(whole.size(), 4096u);
  Elf64_Ehdr eh{};
  std::memcpy(&eh, whole.data(), sizeof eh);
  ASSERT_GE(eh.e_phnum, 2);
  const std::size_t ph_end = eh.e_phoff + std::size_t{eh.e_phnum} * sizeof(Elf64_Phdr);
  auto cut_at = [&](std::size_t bytes) {
    const fs::path cut = dir_ / fmt::format("cut-{}.so", bytes);
    std::ofstream(cut, std::ios::binary).write(whole.data(), static_cast<std::streamsize>(bytes));
    return library_file_problem(cut);
  };
  EXPECT_EQ(cut_at(ph_end - 1), fmt::format("truncated ELF: program headers end at byte {} but the file has {}", ph_end, ph_end - 1));
  EXPECT_THAT(cut_at(ph_end), HasSubstr("truncated ELF: a segment ends at byte"));
  EXPECT_THAT(cut_at(sizeof(Elf64_Ehdr) + 1), HasSubstr("program headers end at byte"));
}

}  // namespace
}  // namespace rung
