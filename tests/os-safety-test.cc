// The operating-system pieces that keep another local user, or an odd file,
// from steering or stalling rung: the trust walk up a path, regular files only,
// atomic writes that follow no link and keep the umask, the cache lock that
// names its holder, work directories made fresh.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "file_hash_cases.h"  // identities and the hash cache, held to the cases every system is
#include "os/atomic_file.h"
#include "os/file_hash.h"
#include "os/sha256.h"
#include "os/file_lock.h"
#include "os/opened_file.h"
#include "os/path_trust.h"
#include "os/read_file.h"
#include "os/regular_file.h"
#include "os/work_dir.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

class OsSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-os");
    ::chmod(dir_.c_str(), 0755);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path file(const std::string& name, const std::string& text = "x") {
    std::ofstream(dir_ / name) << text;
    ::chmod((dir_ / name).c_str(), 0644);
    return dir_ / name;
  }
  fs::path dir_;
};

// --- regular files only ---

TEST_F(OsSafetyTest, DevZeroIsRefusedAsACharacterDevice) {
  auto s = check_regular_file("/dev/zero");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("/dev/zero: is a character device, not a file"));
  auto digest = sha256_of_file("/dev/zero");  // used to hash forever
  ASSERT_FALSE(digest);
  EXPECT_THAT(digest.error().message, HasSubstr("character device"));
}

TEST_F(OsSafetyTest, FifoIsRefusedWithoutWaitingForAWriter) {
  const fs::path fifo = dir_ / "model.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto opened = OpenedFile::open(fifo);  // a plain open would block here until a writer came
  ASSERT_FALSE(opened);
  EXPECT_THAT(opened.error().message, HasSubstr("is a FIFO"));
  EXPECT_FALSE(read_input_file_if_usable(fifo, FileKind::kText));
  EXPECT_FALSE(sha256_of_file(fifo));
  FileHashCache hashes(dir_);
  EXPECT_FALSE(hashes.hash(fifo));
}

TEST_F(OsSafetyTest, DirectoryIsSaidToBeOne) {
  auto s = check_regular_file(dir_);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("is a directory"));
  EXPECT_TRUE(check_regular_file(file("m.onnx")));
  EXPECT_EQ(check_regular_file(dir_ / "absent").error().code, ErrorCode::kNotFound);
}

// Probes that hash at once (other models, other processes) keep each other's entries:
// each save reads, merges and writes inside model-hashes.lock. Eight caches read the
// same empty table, each hashes its own file, then all save: all eight entries stay.
TEST_F(OsSafetyTest, EightHashCachesSavingAtOnceLoseNoEntry) {
  constexpr int kCaches = 8;
  fs::create_directories(dir_ / "cache");
  std::vector<fs::path> models;
  for (int i = 0; i < kCaches; ++i) models.push_back(file(fmt::format("m{}.onnx", i), std::string(static_cast<std::size_t>(i) + 1, 'a')));
  std::vector<std::unique_ptr<FileHashCache>> caches;
  for (int i = 0; i < kCaches; ++i) caches.push_back(std::make_unique<FileHashCache>(dir_ / "cache"));  // all read before any saves
  for (int i = 0; i < kCaches; ++i) ASSERT_TRUE(caches[static_cast<std::size_t>(i)]->hash(models[static_cast<std::size_t>(i)]));
  std::vector<std::thread> savers;
  for (auto& c : caches) savers.emplace_back([&c] { c->save(); });
  for (auto& t : savers) t.join();
  FileHashCache after(dir_ / "cache");
  for (const auto& m : models) ASSERT_TRUE(after.hash(m));
  EXPECT_EQ(after.files_hashed(), 0u) << "an entry was lost: a later save wrote over an earlier one";
}

// The hash cache trusts a file's size, inode and modification time together:
// each changed alone makes it hash again, a file swapped in by rename (same
// size, same time, another inode) included.
TEST_F(OsSafetyTest, TheHashCacheHashesAgainWhenSizeInodeOrTimeChangesAlone) {
  const fs::path model = file("m.onnx", "aaaa");
  const timespec pinned[2] = {{1'700'000'000, 5}, {1'700'000'000, 5}};
  auto pin_time = [&](const fs::path& p, const timespec* t) { ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), t, 0), 0); };
  pin_time(model, pinned);
  FileHashCache hashes(dir_ / "cache");
  const std::string a = hashes.hash(model).value();
  EXPECT_EQ(hashes.hash(model).value(), a);
  EXPECT_EQ(hashes.files_hashed(), 1u) << "unchanged: read from the table";

  // Another inode: the same size and time, swapped in by rename.
  const fs::path other = file("other.onnx", "bbbb");
  pin_time(other, pinned);
  fs::rename(other, model);
  const std::string b = hashes.hash(model).value();
  EXPECT_NE(b, a);
  EXPECT_EQ(hashes.files_hashed(), 2u);

  // Another time alone: rewritten in place with the same length.
  { std::ofstream(model, std::ios::in | std::ios::out) << "cccc"; }
  const timespec later[2] = {{1'700'000'000, 6}, {1'700'000'000, 6}};
  pin_time(model, later);
  EXPECT_NE(hashes.hash(model).value(), b);
  EXPECT_EQ(hashes.files_hashed(), 3u);

  // Another size alone: the same inode, its time put back.
  { std::ofstream(model, std::ios::app) << "d"; }
  pin_time(model, later);
  EXPECT_EQ(hashes.hash(model).value(), sha256_hex("ccccd"));
  EXPECT_EQ(hashes.files_hashed(), 4u);
}

// --- the trust walk ---

TEST_F(OsSafetyTest, AFileOnlyThisUserAndRootCanChangeIsTrusted) {
  EXPECT_TRUE(check_path_trusted(file("lib.so")));
}

TEST_F(OsSafetyTest, EveryDirectoryUpThePathIsChecked) {
  // Not only the parent: a grandparent others can write lets them swap the parent.
  fs::create_directories(dir_ / "a" / "b");
  std::ofstream(dir_ / "a" / "b" / "lib.so") << "x";
  ::chmod((dir_ / "a" / "b" / "lib.so").c_str(), 0644);
  ::chmod((dir_ / "a" / "b").c_str(), 0755);
  ::chmod((dir_ / "a").c_str(), 0777);
  auto s = check_path_trusted(dir_ / "a" / "b" / "lib.so");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kPermission);
  EXPECT_THAT(s.error().message, HasSubstr((dir_ / "a").string() + " is writable by other users (mode 777)"));
  ::chmod((dir_ / "a").c_str(), 0775);  // group-writable is others too
  EXPECT_THAT(check_path_trusted(dir_ / "a" / "b" / "lib.so").error().message, HasSubstr("mode 775"));
  ::chmod((dir_ / "a").c_str(), 0755);
  EXPECT_TRUE(check_path_trusted(dir_ / "a" / "b" / "lib.so"));
}

TEST_F(OsSafetyTest, AStickyDirectoryLikeTmpIsPassedThrough) {
  fs::create_directories(dir_ / "shared" / "mine");
  std::ofstream(dir_ / "shared" / "mine" / "lib.so") << "x";
  ::chmod((dir_ / "shared" / "mine" / "lib.so").c_str(), 0644);
  ::chmod((dir_ / "shared").c_str(), 01777);
  EXPECT_TRUE(check_path_trusted(dir_ / "shared" / "mine" / "lib.so"));
  ::chmod((dir_ / "shared").c_str(), 0777);  // without the sticky bit, anyone can rename "mine" away
  EXPECT_FALSE(check_path_trusted(dir_ / "shared" / "mine" / "lib.so"));
}

TEST_F(OsSafetyTest, ALinkIsJudgedByWhereItLiesAndWhereItPoints) {
  const fs::path target = file("lib.so");
  fs::create_directories(dir_ / "open");
  ::chmod((dir_ / "open").c_str(), 0777);
  fs::create_symlink(target, dir_ / "open" / "link.so");
  // The target is fine, but the link lies where anyone can point it elsewhere.
  auto s = check_path_trusted(dir_ / "open" / "link.so");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr((dir_ / "open").string() + " is writable"));

  fs::create_directories(dir_ / "safe");
  fs::create_symlink(dir_ / "open", dir_ / "safe" / "via");
  std::ofstream(dir_ / "open" / "x.so") << "x";
  ::chmod((dir_ / "open" / "x.so").c_str(), 0644);
  // A link in a safe place into an unsafe one: the target's directories count.
  EXPECT_FALSE(check_path_trusted(dir_ / "safe" / "via" / "x.so"));
  fs::create_symlink("../lib.so", dir_ / "safe" / "relative.so");
  EXPECT_TRUE(check_path_trusted(dir_ / "safe" / "relative.so"));
}

// The sticky bit excuses a directory alone (it stops others renaming what they
// do not own in it); on a file it means nothing, and group-writable is others.
TEST_F(OsSafetyTest, AGroupWritableFileIsRefusedStickyBitOrNot) {
  const fs::path lib = file("lib.so");
  for (mode_t mode : {0664, 01664, 0620}) {
    ::chmod(lib.c_str(), mode);
    auto s = check_path_trusted(lib);
    ASSERT_FALSE(s) << std::oct << mode;
    EXPECT_EQ(s.error().code, ErrorCode::kPermission);
    EXPECT_THAT(s.error().message, HasSubstr(fmt::format("{} is writable by other users (mode {:o})", lib.string(), mode)));
  }
  ::chmod(lib.c_str(), 01644);  // sticky, written by its owner alone: nothing for others
  EXPECT_TRUE(check_path_trusted(lib));
  ::chmod(lib.c_str(), 0644);
  fs::create_directories(dir_ / "team" / "mine");
  std::ofstream(dir_ / "team" / "mine" / "lib.so") << "x";
  ::chmod((dir_ / "team" / "mine" / "lib.so").c_str(), 0644);
  ::chmod((dir_ / "team").c_str(), 01775);  // a sticky directory the group shares is passed through
  EXPECT_TRUE(check_path_trusted(dir_ / "team" / "mine" / "lib.so"));
  ::chmod((dir_ / "team").c_str(), 0775);
  EXPECT_FALSE(check_path_trusted(dir_ / "team" / "mine" / "lib.so"));
}

TEST_F(OsSafetyTest, AFileOthersCanWriteIsRefused) {
  const fs::path lib = file("lib.so");
  ::chmod(lib.c_str(), 0646);
  EXPECT_THAT(check_path_trusted(lib).error().message, HasSubstr(lib.string() + " is writable by other users (mode 646)"));
}

TEST_F(OsSafetyTest, SomethingAnotherNonRootUserOwnsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  fs::create_directories(dir_ / "theirs");
  std::ofstream(dir_ / "theirs" / "lib.so") << "x";
  ::chmod((dir_ / "theirs" / "lib.so").c_str(), 0644);
  ASSERT_EQ(::chown((dir_ / "theirs").c_str(), 65534, 65534), 0);
  auto s = check_path_trusted(dir_ / "theirs" / "lib.so");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr((dir_ / "theirs").string() + " is owned by"));
  EXPECT_THAT(s.error().message, HasSubstr("uid 65534"));
  EXPECT_THAT(s.error().message, HasSubstr("not by you or root"));
}

TEST_F(OsSafetyTest, ARelativePathIsNotJudged) {
  EXPECT_EQ(check_path_trusted("lib.so").error().code, ErrorCode::kInvalidArgument);
}

// --- atomic writes ---

class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : old_(::umask(mask)) {}
  ~UmaskScope() { ::umask(old_); }

 private:
  mode_t old_;
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

TEST_F(OsSafetyTest, AtomicWritesKeepTheUmask) {
  {
    UmaskScope mask(077);
    ASSERT_TRUE(write_file_atomically(dir_ / "private.json", "{}"));
    EXPECT_EQ(mode_of(dir_ / "private.json"), 0600u);
  }
  {
    UmaskScope mask(002);
    ASSERT_TRUE(write_file_atomically(dir_ / "group.json", "{}"));
    EXPECT_EQ(mode_of(dir_ / "group.json"), 0664u);
  }
}

TEST_F(OsSafetyTest, AnAtomicWriteReplacesALinkAndNeverWritesThroughIt) {
  const fs::path victim = file("victim.txt", "keep me");
  fs::create_symlink(victim, dir_ / "probe.json");
  ASSERT_TRUE(write_file_atomically(dir_ / "probe.json", "new"));
  EXPECT_EQ(test::read_file(victim), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir_ / "probe.json"));
  EXPECT_EQ(read_input_file_if_usable(dir_ / "probe.json", FileKind::kDocument), "new");
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_THAT(e.path().string(), ::testing::Not(HasSubstr(".tmp.")));
}

TEST_F(OsSafetyTest, ACommitRefusesALinkInPlaceOfTheWrittenFile) {
  const fs::path victim = file("victim.txt", "secret");
  fs::create_symlink(victim, dir_ / "engine.tmp");
  auto s = commit_file(dir_ / "engine.tmp", dir_ / "engine.onnx");
  ASSERT_FALSE(s);
  EXPECT_FALSE(fs::exists(dir_ / "engine.onnx"));
}

// --- the cache lock ---

TEST_F(OsSafetyTest, ALockFileThatIsALinkIsRefusedAndItsTargetNotCreated) {
  fs::create_symlink(dir_ / "elsewhere", dir_ / "probe.lock");
  auto lock = CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(100));
  ASSERT_FALSE(lock);
  EXPECT_THAT(lock.error().message, HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));
}

TEST_F(OsSafetyTest, AWaiterGivesUpAtItsDeadlineNamingTheHolder) {
  auto first = CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(100));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(read_input_file_if_usable(dir_ / "probe.lock", FileKind::kText), std::to_string(::getpid()) + "\n");
  pid_t told = 0;
  auto second = CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(200), [&](pid_t holder) { told = holder; });
  ASSERT_FALSE(second);
  EXPECT_EQ(told, ::getpid());
  EXPECT_THAT(second.error().message, HasSubstr(fmt::format("held by process {}", ::getpid())));
  EXPECT_THAT(second.error().message, HasSubstr("os-safety-test"));  // its command line
  EXPECT_THAT(second.error().message, HasSubstr("not released within 0.2 s"));
}

// An engine being freed while its probe waits for another process's lock: the wait
// ends when the stop flag turns, not at its deadline (a minute here).
TEST_F(OsSafetyTest, AWaiterStopsWaitingWhenItsStopFlagTurns) {
  auto first = CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(100));
  ASSERT_TRUE(first) << first.error().message;
  std::atomic<bool> stop{false};
  std::thread quitting([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop = true;
  });
  auto second = CacheLock::acquire(dir_ / "probe.lock", std::chrono::minutes(1), {}, &stop);
  quitting.join();
  ASSERT_FALSE(second);
  // The flag's words, not the deadline's ("not released within 60 s"): no clock is read.
  EXPECT_THAT(second.error().message, HasSubstr("stopped while waiting for"));
  // Unset, the same wait would run to its deadline: the flag is what ended it.
  std::atomic<bool> never{false};
  auto third = CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(200), {}, &never);
  ASSERT_FALSE(third);
  EXPECT_THAT(third.error().message, HasSubstr("not released within 0.2 s"));
}

TEST_F(OsSafetyTest, AWaiterGetsTheLockOnceItIsReleased) {
  {
    auto first = CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(100));
    ASSERT_TRUE(first);
  }
  EXPECT_TRUE(CacheLock::acquire(dir_ / "probe.lock", std::chrono::milliseconds(100)));
}

// --- work directories ---

TEST_F(OsSafetyTest, WorkDirectoriesAreFreshPrivateAndRemoved) {
  fs::path first_path;
  {
    auto first = WorkDir::create("rung-probe", dir_);
    auto second = WorkDir::create("rung-probe", dir_);
    ASSERT_TRUE(first && second);
    first_path = first->path();
    EXPECT_NE(first->path(), second->path());
    EXPECT_EQ(first->path().parent_path(), dir_);
    EXPECT_EQ(mode_of(first->path()), 0700u);
    std::ofstream(first->path() / "result.json") << "{}";
  }
  EXPECT_FALSE(fs::exists(first_path));
}

TEST_F(OsSafetyTest, WorkDirectoriesGoUnderTmpdirWhenNoOtherUserControlsIt) {
  fs::create_directories(dir_ / "mine");
  ::chmod((dir_ / "mine").c_str(), 0700);
  {
    test::ScopedEnv tmpdir("TMPDIR", (dir_ / "mine").c_str());
    auto w = WorkDir::create("rung-bench");
    ASSERT_TRUE(w);
    EXPECT_EQ(w->path().parent_path(), dir_ / "mine");
  }
  ::chmod((dir_ / "mine").c_str(), 0777);
  test::ScopedEnv tmpdir("TMPDIR", (dir_ / "mine").c_str());
  auto w = WorkDir::create("rung-bench");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->path().parent_path(), fs::path("/tmp"));
}

}  // namespace
}  // namespace rung
