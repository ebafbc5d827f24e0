// The portability seam: src/os/ is the only place that names an operating
// system, and tools/check-os.py (ctest layers.os_only_in_src_os runs it on rung
// itself) finds each way around it planted in a copy of the tree. Also what
// src/os/ gives in neutral words.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "line_channel_cases.h"  // the channel, held to the cases every system is
#include "os/machine.h"
#include "os/progress_file.h"
#include "os/this_process.h"
#include "test_support.h"
#include "this_process_cases.h"  // held to the cases every system is

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(RUNG_TEST_FIXTURES).parent_path().parent_path();

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::trunc | std::ios::binary) << text;
}

test::CommandResult check_os(const fs::path& root) {
  return test::run_command("/usr/bin/python3 '" + (kSource / "tools" / "check-os.py").string() + "' --root '" + root.string() + "'");
}

class OsSeamTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("rung-os-seam"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OsSeamTest, TheCheckNamesEachUseOfTheSystemPlantedInACopyOfTheTree) {
  // The worker's main loop as it is passes; with the parent-death call put back, it fails.
  write(dir_ / "src" / "jobs" / "worker.cpp", test::read_file(kSource / "src" / "jobs" / "worker.cpp"));
  ASSERT_EQ(check_os(dir_).exit_code, 0) << check_os(dir_).out;
  write(dir_ / "src" / "jobs" / "more.cpp",
        "#include <sys/prctl.h>\n"               // 1
        "#include <csignal>\n"                   // 2: the C++ standard's, not the system's
        "// getpid() in a comment is fine\n"     // 3
        "const char* s = \"isatty( in a string\";\n"  // 4
        "#if defined(_WIN32)\n"                  // 5
        "#endif\n"                               // 6
        "void f() { ::prctl(1, 9); }\n"          // 7
        "long g() { return getpid(); }\n"        // 8
        "ChildExit kill();\n"                    // 9: a declaration of rung's own
        "void h(C& c, C* p) { c.kill(); p->poll(); Job::kill(); }\n"  // 10: members and qualified names
        "pid_t who = 0;\n"                       // 11
        "int k = onnx::TensorProto::BOOL;\n"     // 12: another's name
        "void* l = dlopen(path, 0);\n"           // 13
        "HANDLE job = CreateJobObjectW(nullptr, nullptr);\n"  // 14
        "#include <windows.h>\n"                 // 15
        "bool t = !isatty(2);\n"                 // 16
        "std::string q = \"libQnnHtp.so\";\n"     // 17: a library's file name
        "auto d = dir / \"onnxruntime.dll\";\n"   // 18
        "std::string m = \"model.onnx\";\n"      // 19: no library's
        "#include \"windows.h\"\n"              // 20: quoted
        "#include <Windows.h>\n"                // 21: capitalised
        "#ifdef WIN32\n"                         // 22: the old spelling
        "#elif defined(__BIONIC__)\n"            // 23: Android's C library
        "#endif\n"                               // 24
        "#include \"winSock2.H\"\n");            // 25
  write(dir_ / "src" / "os" / "posix" / "ok.cpp", "#include <unistd.h>\nlong p() { return ::getpid(); }\n");
  write(dir_ / "tests" / "t-test.cc", "#include <sys/wait.h>\npid_t c = fork();\n");
  write(dir_ / "cli" / "main.cpp", "#ifdef __linux__\n#endif\n");
  // Files included inline, under each suffix they are written with.
  for (const char* suffix : {".inl", ".ipp", ".tcc", ".hxx"}) {
    write(dir_ / "src" / "jobs" / (std::string("inline") + suffix), "\nlong p() { return getpid(); }\n");
  }
  auto found = check_os(dir_);
  EXPECT_EQ(found.exit_code, 1);
  for (int line : {1, 5, 7, 8, 11, 13, 14, 15, 16, 17, 18, 20, 21, 22, 23, 25}) {
    EXPECT_THAT(found.out, HasSubstr(fmt::format("src/jobs/more.cpp:{}:", line)));
  }
  for (int line : {2, 3, 4, 6, 9, 10, 12, 19, 24}) EXPECT_THAT(found.out, Not(HasSubstr(fmt::format("src/jobs/more.cpp:{}:", line))));
  for (const char* suffix : {".inl", ".ipp", ".tcc", ".hxx"}) {
    EXPECT_THAT(found.out, HasSubstr(fmt::format("src/jobs/inline{}:2: getpid()", suffix)));
  }
  EXPECT_THAT(found.out, HasSubstr("cli/main.cpp:1: __linux__"));
  EXPECT_THAT(found.out, Not(HasSubstr("src/os/posix/ok.cpp")));
  EXPECT_THAT(found.out, Not(HasSubstr("tests/t-test.cc")));
  EXPECT_THAT(found.out, Not(HasSubstr("jobs/worker.cpp")));
}

TEST(OsNeutral, ThisProcessInNeutralWords) {
  EXPECT_GT(this_process_id(), 1);
  EXPECT_NE(host_name(), "");
  EXPECT_GT(peak_resident_kib(), 1000.0) << "a test program holds more than a megabyte";
  EXPECT_STREQ(built_for_system(), "linux");
}

TEST_F(OsSeamTest, AProgressFileHoldsOneFixedWidthLineRewrittenInPlace) {
  const fs::path file = dir_ / "progress";
  {
    ProgressFile p(file);
    p.update(1000, 2000, true);
    EXPECT_EQ(test::read_file(file).substr(0, 10), "1000 2000\n");
    p.update(3, 2000, true);
    const std::string text = test::read_file(file);
    EXPECT_EQ(text.size(), 32u);
    EXPECT_EQ(text.substr(0, 7), "3 2000\n") << "no tail of the longer line before it";
  }
  ProgressFile none("");
  none.update(1, 1, true);  // no file named: nothing written, nothing fails
  ProgressFile unopenable(dir_ / "missing" / "progress");
  unopenable.update(1, 1, true);
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

}  // namespace
}  // namespace rung
