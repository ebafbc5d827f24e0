// Work directories on Windows (os/work_dir.h over os/windows/fresh_dir.cpp and
// os/windows/process_identity.cpp), under wine: made fresh under a random name,
// removed with their handle, kept in place whole, and the ones whose maker has
// ended swept by the next process; a live maker's, a damaged note's and a link's left.
#include <windows.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "os/fresh_dir.h"
#include "os/process_identity.h"
#include "os/work_dir.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WindowsWorkDirTest : public test::TempDirTest {
 protected:
  WindowsWorkDirTest() : TempDirTest("rung-workdir") {}
  // A directory as a maker would leave it, its note naming `maker`.
  fs::path left_by(const std::string& name, const ProcessIdentity& maker) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / name / kWorkDirOwnerFile) << maker.to_text();
    std::ofstream(dir_ / name / "result.bin") << "x";
    return dir_ / name;
  }
};

TEST_F(WindowsWorkDirTest, ThisProcessIsNamedByItsCreationTime) {
  auto me = this_process();
  ASSERT_TRUE(me);
  EXPECT_EQ(me->pid, static_cast<long>(GetCurrentProcessId()));
  EXPECT_GT(me->start_ticks, 0u);
  EXPECT_THAT(me->pid_namespace, HasSubstr("session:"));
  EXPECT_FALSE(process_has_ended(*me));
  auto back = ProcessIdentity::parse(me->to_text());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->start_ticks, me->start_ticks);
}

TEST_F(WindowsWorkDirTest, AMadeDirectoryIsFreshNotedAndRemovedWithItsHandle) {
  fs::path made;
  {
    auto dir = WorkDir::create("rung-bench", dir_);
    ASSERT_TRUE(dir) << dir.error().message;
    made = dir->path();
    EXPECT_EQ(made.parent_path(), dir_);
    // PREFIX.XXXXXX (gtest's own regular expressions on Windows know no classes or counts).
    const std::string name = made.filename().string();
    ASSERT_EQ(name.size(), std::string("rung-bench.").size() + 6) << name;
    EXPECT_EQ(name.rfind("rung-bench.", 0), 0u) << name;
    for (char c : name.substr(11)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << name;
    EXPECT_TRUE(fs::is_regular_file(made / kWorkDirOwnerFile));
    auto other = WorkDir::create("rung-bench", dir_);
    ASSERT_TRUE(other);
    EXPECT_NE(other->path(), made);
  }
  EXPECT_FALSE(fs::exists(made));
}

TEST_F(WindowsWorkDirTest, AFinishedDirectoryIsKeptWholeAndNeverOverAnother) {
  auto dir = WorkDir::create("rung-engine", dir_);
  ASSERT_TRUE(dir);
  std::ofstream(dir->path() / "engine.onnx") << "compiled";
  fs::create_directories(dir_ / "taken");
  auto refused = dir->keep_as(dir_ / "taken");
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("already there"));
  ASSERT_TRUE(dir->keep_as(dir_ / "engine")) << "kept";
  EXPECT_TRUE(fs::is_regular_file(dir_ / "engine" / "engine.onnx"));
  EXPECT_FALSE(fs::exists(dir_ / "engine" / kWorkDirOwnerFile));
}

TEST_F(WindowsWorkDirTest, OnlyTheDirectoriesOfEndedMakersAreSwept) {
  auto me = this_process();
  ASSERT_TRUE(me);
  ProcessIdentity reused = *me;
  reused.start_ticks -= 1;  // this pid, but a process created at another instant: that one has ended
  ProcessIdentity gone = *me;
  gone.pid = 0x7ffffff0;  // no such process
  const fs::path ended = left_by("rung-probe.AAAAAA", reused);
  const fs::path vanished = left_by("rung-probe.BBBBBB", gone);
  const fs::path alive = left_by("rung-probe.CCCCCC", *me);
  const fs::path unnamed = left_by("rung-probe.DDDDDD", *me);
  std::ofstream(unnamed / kWorkDirOwnerFile) << "not a note";
  const fs::path other_name = left_by("rung-probe.too-long", reused);
  // Each note reads back as this user's and names its maker.
  for (const auto& d : {ended, vanished, alive}) {
    auto note = read_own_note(d, kWorkDirOwnerFile, 1024);
    ASSERT_TRUE(note) << d.string();
    ASSERT_TRUE(ProcessIdentity::parse(*note)) << *note;
  }
  EXPECT_TRUE(process_has_ended(reused));
  EXPECT_TRUE(process_has_ended(gone));
  EXPECT_EQ(remove_abandoned_work_dirs(dir_), 2u);
  EXPECT_FALSE(fs::exists(ended));
  EXPECT_FALSE(fs::exists(vanished));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(unnamed));
  EXPECT_TRUE(fs::exists(other_name));
}

TEST_F(WindowsWorkDirTest, TheTemporaryRootIsTheUsersOwn) {
  const fs::path root = temporary_root();
  EXPECT_TRUE(root.is_absolute()) << root.string();
  EXPECT_TRUE(fs::is_directory(root)) << root.string();
}

}  // namespace
}  // namespace rung
