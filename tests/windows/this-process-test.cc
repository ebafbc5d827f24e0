// This process on Windows (os/windows/this_process.cpp), under wine. Ending with
// the parent is tested with real processes: this test starts itself as a middle
// process, which starts itself again as a grandchild that asks to end with the
// middle one; the middle one then exits, and the grandchild must end too.
#include <windows.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "os/this_process.h"
#include "rung/terminal.h"
#include "this_process_cases.h"  // held to the cases every system is

namespace rung {
namespace {

namespace fs = std::filesystem;

std::wstring variable(const wchar_t* name) {
  wchar_t value[4096];
  const DWORD n = GetEnvironmentVariableW(name, value, 4096);
  return n > 0 && n < 4096 ? std::wstring(value, n) : std::wstring();
}

std::wstring this_program() {
  wchar_t path[MAX_PATH * 4];
  const DWORD n = GetModuleFileNameW(nullptr, path, MAX_PATH * 4);
  return std::wstring(path, n);
}

// Starts this program again in `role`, the report file and the parent id in its environment.
PROCESS_INFORMATION start_self(const std::wstring& role, const std::wstring& report, long parent) {
  SetEnvironmentVariableW(L"RUNG_TEST_ROLE", role.c_str());
  SetEnvironmentVariableW(L"RUNG_TEST_REPORT", report.c_str());
  SetEnvironmentVariableW(L"RUNG_TEST_PARENT", std::to_wstring(parent).c_str());
  std::wstring command = L"\"" + this_program() + L"\"";
  STARTUPINFOW startup{};
  startup.cb = sizeof startup;
  PROCESS_INFORMATION started{};
  const BOOL ok = CreateProcessW(nullptr, command.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &startup, &started);
  SetEnvironmentVariableW(L"RUNG_TEST_ROLE", nullptr);
  if (!ok) started.hProcess = nullptr;
  return started;
}

void append(const std::wstring& report, const std::string& line) { std::ofstream(fs::path(report), std::ios::app) << line << "\n"; }

std::string contents_of(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The roles this program plays when started by the test, before GoogleTest runs.
const bool kPlayedARole = [] {
  const std::wstring role = variable(L"RUNG_TEST_ROLE");
  if (role.empty()) return false;
  const std::wstring report = variable(L"RUNG_TEST_REPORT");
  if (role == L"middle") {
    PROCESS_INFORMATION child = start_self(L"grandchild", report, this_process_id());
    if (child.hProcess == nullptr) ExitProcess(3);
    for (int i = 0; i < 200 && contents_of(fs::path(report)).find("armed") == std::string::npos; ++i) Sleep(50);
    ExitProcess(0);  // the grandchild must follow
  }
  if (role == L"grandchild") {
    const bool armed = end_with_parent(std::stol(variable(L"RUNG_TEST_PARENT")));
    append(report, (armed ? "armed " : "unarmed ") + std::to_string(this_process_id()));
    Sleep(30000);
    append(report, "survived its parent");
    ExitProcess(0);
  }
  if (role == L"sleeper") {
    Sleep(30000);
    ExitProcess(0);
  }
  return true;
}();

class WindowsThisProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = (fs::temp_directory_path() / ("rung-process-" + std::to_string(std::random_device{}()) + ".txt")).wstring();
  }
  void TearDown() override { fs::remove(fs::path(report_)); }
  std::wstring report_;
};

TEST_F(WindowsThisProcessTest, AProcessEndsWithItsParent) {
  ASSERT_FALSE(kPlayedARole);
  PROCESS_INFORMATION middle = start_self(L"middle", report_, this_process_id());
  ASSERT_NE(middle.hProcess, nullptr) << "CreateProcessW failed";
  ASSERT_EQ(WaitForSingleObject(middle.hProcess, 20000), WAIT_OBJECT_0);
  DWORD middle_code = 99;
  GetExitCodeProcess(middle.hProcess, &middle_code);
  ASSERT_EQ(middle_code, 0u);
  const std::string said = contents_of(fs::path(report_));
  ASSERT_THAT(said, ::testing::StartsWith("armed ")) << "the grandchild could not ask to end with its parent: " << said;
  const DWORD grandchild = static_cast<DWORD>(std::stoul(said.substr(6)));
  HANDLE g = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_TERMINATE, FALSE, grandchild);
  if (g == nullptr) return;  // already gone: ended with its parent
  const DWORD waited = WaitForSingleObject(g, 15000);
  if (waited != WAIT_OBJECT_0) TerminateProcess(g, 9);
  CloseHandle(g);
  EXPECT_EQ(waited, WAIT_OBJECT_0) << "the grandchild outlived its parent by 15 s";
  EXPECT_THAT(contents_of(fs::path(report_)), ::testing::Not(::testing::HasSubstr("survived")));
}

TEST_F(WindowsThisProcessTest, AParentThatIsGoneOrYoungerIsRefused) {
  EXPECT_FALSE(end_with_parent(0));
  EXPECT_FALSE(end_with_parent(0x7ffffff0));  // no such process
  // A process that began after this one cannot be its parent (its id may be a reused one).
  PROCESS_INFORMATION younger = start_self(L"sleeper", report_, this_process_id());
  ASSERT_NE(younger.hProcess, nullptr);
  EXPECT_FALSE(end_with_parent(static_cast<long>(younger.dwProcessId)));
  TerminateProcess(younger.hProcess, 0);
  WaitForSingleObject(younger.hProcess, 10000);
}

TEST(WindowsThisProcess, FactsOfThisProcess) {
  EXPECT_EQ(this_process_id(), static_cast<long>(GetCurrentProcessId()));
  EXPECT_NE(host_name(), "unknown");
  EXPECT_FALSE(host_name().empty());
  EXPECT_FALSE(stderr_is_terminal()) << "ctest gives the test a pipe, not a console";
  const double before = peak_resident_kib();
  EXPECT_GT(before, 0);
  std::vector<char> touched(64 << 20, 1);  // 64 MiB resident
  EXPECT_GE(peak_resident_kib(), before + 32 * 1024) << static_cast<int>(touched[12345]);
}

TEST(WindowsThisProcess, ALoweredThreadRunsBelowNormal) {
  int priority = 0;
  std::thread([&] {
    lower_this_thread_priority();
    priority = GetThreadPriority(GetCurrentThread());
  }).join();
  EXPECT_EQ(priority, THREAD_PRIORITY_BELOW_NORMAL);
  EXPECT_EQ(GetThreadPriority(GetCurrentThread()), THREAD_PRIORITY_NORMAL) << "only the calling thread is lowered";
}

// What a worker asks first thing: no error dialog, and a last exception filter,
// so that a crash ends it with its code (wine would otherwise start its debugger;
// Windows, Error Reporting). That a crash then ends with its code:
// child-process-test's ACrashIsReportedByItsExceptionCode.
TEST(WindowsThisProcess, ACrashEndsThisProcessWithoutWaitingOnAPerson) {
  SetErrorMode(0);
  SetUnhandledExceptionFilter(nullptr);
  crash_without_waiting();
  EXPECT_NE(GetErrorMode() & SEM_NOGPFAULTERRORBOX, 0u);
  EXPECT_NE(GetErrorMode() & SEM_FAILCRITICALERRORS, 0u);
  const LPTOP_LEVEL_EXCEPTION_FILTER set = SetUnhandledExceptionFilter(nullptr);
  ASSERT_NE(set, nullptr) << "no last exception filter";
  EXPECT_EQ(set(nullptr), EXCEPTION_EXECUTE_HANDLER) << "the filter ends the process with the exception's code";
}

}  // namespace
}  // namespace rung
