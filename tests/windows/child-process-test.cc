// Child processes on Windows (os/windows/child_process.cpp), under wine, with real
// processes: this test program starts itself in a role (exit with a code, crash,
// hang, echo its arguments, its input or its environment, or start a grandchild
// and die at once) and judges what ChildProcess reports, and that nothing it
// started outlives it.
#include <windows.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <shellapi.h>

#include <fcntl.h>
#include <io.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "os/child_environment.h"
#include "os/child_process.h"
#include "os/line_channel.h"
#include "os/this_process.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

std::string utf8(const std::wstring& w) {
  if (w.empty()) return {};
  const int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), out.data(), n, nullptr, nullptr);
  return out;
}

fs::path this_program() {
  wchar_t path[MAX_PATH * 4];
  const DWORD n = GetModuleFileNameW(nullptr, path, MAX_PATH * 4);
  return fs::path(std::wstring(path, n));
}

std::string contents_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// True when no process has the id, or the one that has it has ended, within `seconds`.
bool gone_within(long pid, int seconds) {
  const HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (h == nullptr) return true;
  const bool ended = WaitForSingleObject(h, static_cast<DWORD>(seconds) * 1000) == WAIT_OBJECT_0;
  CloseHandle(h);
  return ended;
}

void say(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// The roles this program plays when the test starts it ("--role NAME ..."), before GoogleTest runs.
const bool kPlayedARole = [] {
  int argc = 0;
  wchar_t** argv = CommandLineToArgvW(GetCommandLineW(), &argc);
  if (argv == nullptr || argc < 3 || std::wstring(argv[1]) != L"--role") return false;
  crash_without_waiting();  // as a worker does: a crash ends it with its exception code, no dialog, no debugger
  _setmode(_fileno(stdout), _O_BINARY);  // the log holds what was written, no CR added
  const std::wstring role = argv[2];
  if (role == L"exit") {
    say("to stdout\n");
    std::fputs("to stderr\n", stderr);
    std::fflush(stderr);
    ExitProcess(static_cast<UINT>(std::stoi(argv[3])));
  }
  if (role == L"echo") {
    for (int i = 3; i < argc; ++i) say("[" + utf8(argv[i]) + "]\n");
    ExitProcess(0);
  }
  if (role == L"crash") {
    *static_cast<volatile int*>(nullptr) = 1;
    ExitProcess(0);
  }
  if (role == L"abort") std::abort();  // msvcrt's abort would exit 3, a code any program may return
  if (role == L"hang") {
    say("hanging\n");
    Sleep(60000);
    ExitProcess(0);
  }
  if (role == L"sleep") {
    Sleep(static_cast<DWORD>(std::stoi(argv[3])));
    ExitProcess(0);
  }
  if (role == L"input") {
    char buf[256];
    std::size_t total = 0;
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, stdin)) > 0;) total += n;
    say("read " + std::to_string(total) + " bytes\n");
    ExitProcess(0);
  }
  if (role == L"environment") {
    const wchar_t* value = _wgetenv(argv[3]);
    say(value != nullptr ? "set: " + utf8(value) + "\n" : "unset\n");
    ExitProcess(0);
  }
  if (role == L"channel" || role == L"channel-crash") {
    // Answers each line on the channel it was handed until "bye"; or crashes after the first.
    LineChannel channel(std::stoi(argv[3]));
    for (std::string line; channel.receive(line) == LineChannel::Read::kLine;) {
      if (role == L"channel-crash") *static_cast<volatile int*>(nullptr) = 1;
      if (line == "bye") break;
      channel.send("echo: " + line);
    }
    ExitProcess(0);
  }
  if (role == L"middle") {
    // Starts a grandchild that hangs, says its id, then dies at once: no destructor runs, as in a crash or a kill.
    auto child = ChildProcess::spawn(this_program(), {"--role", "hang"}, fs::path(argv[3]).replace_extension(".grandchild.log"));
    if (!child) ExitProcess(3);
    std::ofstream(fs::path(argv[3])) << GetProcessId(GetCurrentProcess()) << "\n" << child->pid() << "\n";
    TerminateProcess(GetCurrentProcess(), 9);
  }
  ExitProcess(2);
}();

class WindowsChildProcessTest : public test::TempDirTest {
 protected:
  WindowsChildProcessTest() : TempDirTest("rung-child") {}

  ChildProcess start(const std::vector<std::string>& role) {
    std::vector<std::string> args{"--role"};
    args.insert(args.end(), role.begin(), role.end());
    auto child = ChildProcess::spawn(this_program(), args, dir_ / "child.log");
    if (!child) {
      ADD_FAILURE() << child.error().message;
      std::abort();  // nothing to judge without the child
    }
    return std::move(*child);
  }
  ChildExit finish(ChildProcess& child, std::chrono::milliseconds deadline = std::chrono::seconds(60)) {
    return child.wait(Clock::now() + deadline);
  }
  std::string log() const { return contents_of(dir_ / "child.log"); }
};

TEST_F(WindowsChildProcessTest, AnExitCodeIsReportedAndTheLogHoldsStdoutAndStderr) {
  auto child = start({"exit", "7"});
  const ChildExit e = finish(child);
  EXPECT_FALSE(e.timed_out);
  EXPECT_EQ(e.exit_code, 7);
  EXPECT_EQ(e.signal, 0);
  EXPECT_THAT(log(), HasSubstr("to stdout"));
  EXPECT_THAT(log(), HasSubstr("to stderr"));
  auto zero = start({"exit", "0"});
  EXPECT_EQ(finish(zero).exit_code, 0);
}

TEST_F(WindowsChildProcessTest, ArgumentsArriveAsGiven) {
  const std::vector<std::string> given{"plain", "with space", "a \"quoted\" word", "trailing\\", "two\\\\ \\\"", "", "tab\there", "C:\\dir with space\\",
                                       "\xc3\xbcnic\xc3\xb8" "de"};
  std::vector<std::string> role{"echo"};
  role.insert(role.end(), given.begin(), given.end());
  auto child = start(role);
  EXPECT_EQ(finish(child).exit_code, 0);
  std::string expected;
  for (const auto& a : given) expected += "[" + a + "]\n";
  EXPECT_EQ(log(), expected);
}

TEST_F(WindowsChildProcessTest, ACrashIsReportedByItsExceptionCode) {
  auto child = start({"crash"});
  const ChildExit e = finish(child);
  EXPECT_FALSE(e.timed_out);
  EXPECT_EQ(static_cast<DWORD>(e.signal), 0xC0000005u);
  EXPECT_EQ(e.exit_code, -1);
  EXPECT_EQ(signal_name(e.signal), "EXCEPTION_ACCESS_VIOLATION");
  EXPECT_EQ(signal_name(static_cast<int>(0xC0000409u)), "STATUS_STACK_BUFFER_OVERRUN");
  EXPECT_EQ(signal_name(static_cast<int>(0xC0001234u)), "exception 0xC0001234");
}

TEST_F(WindowsChildProcessTest, AnAbortIsACrashAsTheUcrtEndsIt) {
  auto child = start({"abort"});
  const ChildExit e = finish(child);
  EXPECT_EQ(static_cast<DWORD>(e.signal), 0xC0000409u);
  EXPECT_EQ(e.exit_code, -1);
  EXPECT_EQ(signal_name(e.signal), "STATUS_STACK_BUFFER_OVERRUN");
}

TEST_F(WindowsChildProcessTest, AChildPastItsDeadlineIsKilledAndGone) {
  auto child = start({"hang"});
  const long pid = child.pid();
  const ChildExit e = finish(child, std::chrono::milliseconds(800));
  EXPECT_TRUE(e.timed_out);
  EXPECT_GE(e.elapsed_ms, 700) << "killed at its deadline, not before";
  EXPECT_TRUE(gone_within(pid, 5));
}

TEST_F(WindowsChildProcessTest, WhileItRunsTheWaiterIsCalledBack) {
  auto child = start({"sleep", "1500"});
  int calls = 0;
  const ChildExit e = child.wait(Clock::now() + std::chrono::seconds(60), [&] { ++calls; }, std::chrono::milliseconds(100));
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_GE(calls, 3);
}

TEST_F(WindowsChildProcessTest, KillEndsARunningChildAndSoDoesLettingItGo) {
  auto child = start({"hang"});
  const long pid = child.pid();
  const ChildExit e = child.kill();
  EXPECT_FALSE(e.timed_out);
  EXPECT_EQ(signal_name(e.signal), "STATUS_CONTROL_C_EXIT");
  EXPECT_TRUE(gone_within(pid, 5));
  long second = 0;
  {
    auto dropped = start({"hang"});
    second = dropped.pid();
  }
  EXPECT_TRUE(gone_within(second, 5));
}

TEST_F(WindowsChildProcessTest, ItsInputIsNulSoAReaderEndsAtOnce) {
  auto child = start({"input"});
  EXPECT_EQ(finish(child).exit_code, 0);
  EXPECT_EQ(log(), "read 0 bytes\n");
}

TEST_F(WindowsChildProcessTest, AVariableLentToChildrenReachesThemAndNotThisProcess) {
  set_child_variable("RUNG_TEST_LENT", "lent value");
  auto child = start({"environment", "RUNG_TEST_LENT"});
  EXPECT_EQ(finish(child).exit_code, 0);
  unset_child_variable("RUNG_TEST_LENT");
  EXPECT_EQ(log(), "set: lent value\n");
  EXPECT_EQ(_wgetenv(L"RUNG_TEST_LENT"), nullptr);
  auto without = start({"environment", "RUNG_TEST_LENT"});
  EXPECT_EQ(finish(without).exit_code, 0);
  EXPECT_EQ(log(), "unset\n");
  // This process's own variables still reach it.
  auto own = start({"environment", "SystemRoot"});
  EXPECT_EQ(finish(own).exit_code, 0);
  EXPECT_THAT(log(), HasSubstr("set: "));
}

TEST_F(WindowsChildProcessTest, AMissingProgramIsNamedAndNothingStarts) {
  auto missing = ChildProcess::spawn(dir_ / "absent.exe", {}, dir_ / "child.log");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message, HasSubstr("absent.exe"));
  auto no_log = ChildProcess::spawn(this_program(), {"--role", "exit", "0"}, dir_ / "no such dir" / "child.log");
  ASSERT_FALSE(no_log);
  EXPECT_THAT(no_log.error().message, HasSubstr("creating its log"));
  auto renumbered = ChildProcess::spawn(this_program(), {"--role", "exit", "0"}, dir_ / "child.log", 5, 3);
  ASSERT_FALSE(renumbered);
  EXPECT_THAT(renumbered.error().message, HasSubstr("keeps its value on Windows (5, not 3)"));
}

// A started job's channel: the child finds its end by the number the pair gives (ChannelEnds::in_child).
ChildProcess start_with_channel(const fs::path& log, const std::string& role, const ChannelEnds& ends) {
  auto child = ChildProcess::spawn(this_program(), {"--role", role, std::to_string(ends.in_child)}, log, ends.theirs, ends.in_child);
  close_channel_end(ends.theirs);
  if (!child) {
    ADD_FAILURE() << child.error().message;
    std::abort();
  }
  return std::move(*child);
}

TEST_F(WindowsChildProcessTest, AChannelHandedToAChildCarriesLinesBothWaysUntilItEnds) {
  auto ends = open_channel_pair();
  ASSERT_TRUE(ends) << ends.error().message;
  auto child = start_with_channel(dir_ / "child.log", "channel", *ends);
  LineChannel ours(ends->ours);
  std::string line;
  for (const std::string& sent : std::vector<std::string>{"one", "{\"a\": [1, 2]}", std::string(100'000, 'x')}) {
    ASSERT_TRUE(ours.send(sent));
    ASSERT_EQ(ours.receive(line, Clock::now() + std::chrono::seconds(30)), LineChannel::Read::kLine) << log();
    EXPECT_TRUE(line == "echo: " + sent) << line.substr(0, 80);
  }
  ASSERT_TRUE(ours.send("bye"));
  EXPECT_EQ(finish(child).exit_code, 0);
  EXPECT_EQ(ours.receive(line, Clock::now() + std::chrono::seconds(30)), LineChannel::Read::kClosed) << "the child's end closed with it";
}

TEST_F(WindowsChildProcessTest, AChildThatCrashesClosesItsChannelAndNothingWaitsForever) {
  auto ends = open_channel_pair();
  ASSERT_TRUE(ends) << ends.error().message;
  auto child = start_with_channel(dir_ / "child.log", "channel-crash", *ends);
  LineChannel ours(ends->ours);
  ASSERT_TRUE(ours.send("take this"));
  std::string line;
  EXPECT_EQ(ours.receive(line, Clock::now() + std::chrono::seconds(30)), LineChannel::Read::kClosed);
  const ChildExit e = finish(child);
  EXPECT_EQ(signal_name(e.signal), "EXCEPTION_ACCESS_VIOLATION");
}

TEST_F(WindowsChildProcessTest, AChildEndsWithItsParentHoweverTheParentEnds) {
  // The middle process starts a grandchild and is then terminated outright: its
  // Job Object's last handle closes with it, and the grandchild must go too.
  auto middle = start({"middle", (dir_ / "ids.txt").string()});
  const ChildExit e = finish(middle);
  EXPECT_EQ(e.exit_code, 9);
  std::istringstream ids(contents_of(dir_ / "ids.txt"));
  long middle_pid = 0, grandchild = 0;
  ids >> middle_pid >> grandchild;
  ASSERT_GT(grandchild, 0) << "the middle process did not start its grandchild";
  EXPECT_TRUE(gone_within(grandchild, 15)) << "the grandchild " << grandchild << " outlived its parent";
}

}  // namespace
}  // namespace rung
