// Atomic writes (os/atomic_file.h) under real failures: a process killed in the
// middle of writing, and a write the kernel cuts short, each leave the old
// content whole. The file-size limit (RLIMIT_FSIZE) makes both happen at a
// known byte, in a child process, so nothing depends on timing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "os/atomic_file.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

constexpr rlim_t kLimit = 4096;                   // bytes a child may write to any one file
const std::string kNew(16 * kLimit, 'n');         // four times past it

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-atomic");
    file_ = dir_ / "probe.json";
    ASSERT_TRUE(write_file_atomically(file_, "old content"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs write_file_atomically(file_, kNew) in a child limited to kLimit bytes
  // per file; returns its wait status. The child exits 0 when the write
  // returned an error, 1 when it claimed success.
  int write_in_limited_child(bool survive_the_limit) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (survive_the_limit) signal(SIGXFSZ, SIG_IGN);  // then write() returns short, and EFBIG after
      const rlimit limit{kLimit, kLimit};
      setrlimit(RLIMIT_FSIZE, &limit);
      const bool ok = static_cast<bool>(write_file_atomically(file_, kNew));
      _exit(ok ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }

  fs::path dir_, file_;
};

TEST_F(AtomicFileTest, AProcessKilledMidWriteLeavesTheOldContent) {
  const int status = write_in_limited_child(false);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child was meant to die at the size limit, mid-write";
  EXPECT_EQ(WTERMSIG(status), SIGXFSZ);
  EXPECT_EQ(test::read_file(file_), "old content");
}

TEST_F(AtomicFileTest, AShortWriteIsAnErrorAndLeavesTheOldContent) {
  const int status = write_in_limited_child(true);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "write_file_atomically claimed success with a quarter of the bytes written";
  EXPECT_EQ(test::read_file(file_), "old content");
}

TEST_F(AtomicFileTest, AFinishedWriteReplacesTheContentAndLeavesNoTemporary) {
  ASSERT_TRUE(write_file_atomically(file_, kNew));
  EXPECT_EQ(test::read_file(file_), kNew);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

// A worker's scratch outputs: written whole, a retried job's file replaced, a link in its place removed (never
// written through), a short write an error; and no temporary, rename or fsync (the result's marker is atomic).
TEST_F(AtomicFileTest, AScratchFileReplacesWhatWasThereNeverWritesThroughALinkAndSaysWhenItIsShort) {
  const fs::path scratch = dir_ / "output_0.pb";
  ASSERT_TRUE(write_scratch_file(scratch, "first"));
  ASSERT_TRUE(write_scratch_file(scratch, "second"));
  EXPECT_EQ(test::read_file(scratch), "second");
  fs::remove(scratch);
  fs::create_symlink(file_, scratch);
  ASSERT_TRUE(write_scratch_file(scratch, "mine"));
  EXPECT_FALSE(fs::is_symlink(scratch));
  EXPECT_EQ(test::read_file(scratch), "mine");
  EXPECT_EQ(test::read_file(file_), "old content") << "written through a link";
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 2u) << "a temporary was left";
  // A write cut short at the size limit, in a child: an error, and no file claiming to be whole.
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{kLimit, kLimit};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const bool ok = static_cast<bool>(write_scratch_file(dir_ / "cut.pb", kNew));
    ::_exit(ok ? 1 : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "write_scratch_file claimed success with a quarter of the bytes written";
  EXPECT_FALSE(fs::exists(dir_ / "cut.pb"));
}

}  // namespace
}  // namespace rung
