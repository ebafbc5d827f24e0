// The cache lock on Windows (os/windows/file_lock.cpp, LockFileEx), under wine:
// one holder at a time, a waiter told who holds it, released with its holder,
// and a lock file that is not a regular file refused.
#include <windows.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <fmt/format.h>

#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "os/file_lock.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

const long kThisProcess = static_cast<long>(GetCurrentProcessId());

class WindowsFileLockTest : public test::TempDirTest {
 protected:
  WindowsFileLockTest() : TempDirTest("rung-lock") {}
  void SetUp() override {
    TempDirTest::SetUp();
    lock_ = dir_ / "probe.lock";
  }
  fs::path lock_;
};

TEST_F(WindowsFileLockTest, TheHolderWritesItsIdWhereAWaiterCanReadIt) {
  auto held = CacheLock::acquire(lock_, 0ms);
  ASSERT_TRUE(held) << held.error().message;
  std::ifstream in(lock_, std::ios::binary);  // readable while held: the locked byte lies past the id
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::to_string(kThisProcess) + "\n");
}

TEST_F(WindowsFileLockTest, ASecondTakerWaitsItsTimeAndIsToldWhoHoldsIt) {
  auto held = CacheLock::acquire(lock_, 0ms);
  ASSERT_TRUE(held) << held.error().message;
  long told = -1;
  const auto t0 = std::chrono::steady_clock::now();
  auto second = CacheLock::acquire(lock_, 200ms, [&](long holder) { told = holder; });
  ASSERT_FALSE(second);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 200ms);
  EXPECT_EQ(told, kThisProcess);
  EXPECT_THAT(second.error().message, HasSubstr(lock_.string() + " is held by process " + std::to_string(kThisProcess) + " ("));
  EXPECT_THAT(second.error().message, HasSubstr("file-lock-test.exe"));
  EXPECT_THAT(second.error().message, HasSubstr("was not released within 0.2 s"));
}

TEST_F(WindowsFileLockTest, TheLockIsFreeOnceItsHolderEnds) {
  { auto held = CacheLock::acquire(lock_, 0ms); ASSERT_TRUE(held); }
  auto again = CacheLock::acquire(lock_, 0ms);
  EXPECT_TRUE(again) << again.error().message;
}

TEST_F(WindowsFileLockTest, AWaiterTakesTheLockWhenItIsReleased) {
  std::optional<CacheLock> held;
  {
    auto taken = CacheLock::acquire(lock_, 0ms);
    ASSERT_TRUE(taken);
    held.emplace(std::move(*taken));
  }
  std::thread release([&] {
    std::this_thread::sleep_for(150ms);
    held.reset();
  });
  bool waited = false;
  auto second = CacheLock::acquire(lock_, 10s, [&](long) { waited = true; });
  release.join();
  EXPECT_TRUE(second) << second.error().message;
  EXPECT_TRUE(waited);
}

TEST_F(WindowsFileLockTest, ADirectoryUnderTheLocksNameIsRefused) {
  fs::create_directory(lock_);
  auto refused = CacheLock::acquire(lock_, 0ms);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr(lock_.string() + ": is not a regular file of this user's"));
}

TEST_F(WindowsFileLockTest, AProcessIsDescribedByItsProgram) {
  EXPECT_EQ(describe_process(0), "an unknown process");
  EXPECT_THAT(describe_process(kThisProcess), HasSubstr(fmt::format("process {} (", kThisProcess)));
  EXPECT_THAT(describe_process(kThisProcess), HasSubstr("file-lock-test.exe)"));
}

}  // namespace
}  // namespace rung
