// Work folders of runs that were killed outright (SIGKILL: no cleanup runs)
// are removed at a later start: each made work folder holds a note naming its
// maker (pid, start time, boot, host, pid namespace), and the first work folder
// made in a directory sweeps it for folders whose maker has surely ended. A
// live process's folder, another user's, a link, one without a whole note or
// from another boot is left alone. Tried with a real `rung bench` killed with
// SIGKILL and a second real run removing what it left.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "model_builder.h"
#include "os/process_identity.h"
#include "os/work_dir.h"
#include "parity_test_support.h"

extern char** environ;

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::q;

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

class LeftoversTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-leftovers");
    tmp_ = dir_ / "tmp";
    fs::create_directory(tmp_);
    fs::permissions(tmp_, fs::perms(0700));
    test::write_elementwise_model(dir_ / "a.onnx", {1, 4});
  }
  void TearDown() override {
    for (pid_t pid : started_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // A note as a maker writes it, with one field changed.
  static std::string note(const ProcessIdentity& p) { return p.to_text(); }
  fs::path folder_with_note(const std::string& name, const std::string& text) const {
    fs::create_directory(tmp_ / name);
    test::write_text(tmp_ / name / kWorkDirOwnerFile, text);
    test::write_text(tmp_ / name / "result.pb", "what the run left");
    return tmp_ / name;
  }
  // A process that has ended, reaped: its identity as its note would hold it.
  static ProcessIdentity ended_process() {
    ProcessIdentity p = this_process().value();
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    p.pid = child;
    return p;
  }

  // `rung ARGS` started in the background with TMPDIR=tmp_; its pid is rung's.
  pid_t start(const std::string& args) {
    const std::string command = "exec env -u RUNG_ORT_DIR TMPDIR=" + q(tmp_) + " " + q(test::cli_path()) + " " + args + " >" +
                                q(dir_ / "out") + " 2>" + q(dir_ / "err") + " </dev/null";
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
    started_.push_back(pid);
    return pid;
  }
  // A bench that measures for an hour: its work folder lives as long as it does.
  pid_t start_long_bench() {
    return start("bench " + q(dir_ / "a.onnx") + " --rung cpu --duration 3600 --warmup 0 --ort-dir " + q(test::runtime_dir("1.30.0")) +
                 " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm"));
  }
  // The work folder (with its note) a run made under tmp_, once it is there.
  fs::path folder_of(pid_t pid) const {
    fs::path found;
    const bool made = eventually(
        [&] {
          std::error_code ec;
          for (fs::directory_iterator it(tmp_, ec), end; !ec && it != end; it.increment(ec)) {
            const auto maker = ProcessIdentity::parse(test::read_file(it->path() / kWorkDirOwnerFile));
            if (maker && maker->pid == pid) {
              found = it->path();
              return true;
            }
          }
          return false;
        },
        std::chrono::seconds(60));
    EXPECT_TRUE(made) << "no work folder of " << pid << "; " << test::read_file(dir_ / "err");
    return found;
  }
  void kill_and_reap(pid_t pid, int signal) {
    ASSERT_EQ(::kill(pid, signal), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << "status " << status << "; " << test::read_file(dir_ / "err");
    started_.erase(std::remove(started_.begin(), started_.end(), pid), started_.end());
  }
  // A second run that makes a work folder under tmp_: parity on the CPU.
  test::CommandResult later_run() const {
    return test::run_command("env -u RUNG_ORT_DIR TMPDIR=" + q(tmp_) + " " + q(test::cli_path()) + " parity --ref " + test::side(dir_ / "a.onnx") +
                             " --cand " + test::side(dir_ / "a.onnx") + " --random 1");
  }

  fs::path dir_, tmp_;
  std::vector<pid_t> started_;
};

TEST_F(LeftoversTest, AWorkFolderNamesItsMaker) {
  auto work = WorkDir::create("rung-bench", tmp_);
  ASSERT_TRUE(work.ok()) << work.error().message;
  const auto maker = ProcessIdentity::parse(test::read_file(work->path() / kWorkDirOwnerFile));
  ASSERT_TRUE(maker.has_value()) << test::read_file(work->path() / kWorkDirOwnerFile);
  const auto me = this_process().value();
  EXPECT_EQ(maker->pid, me.pid);
  EXPECT_EQ(maker->start_ticks, me.start_ticks);
  EXPECT_EQ(maker->boot_id, me.boot_id);
  EXPECT_FALSE(process_has_ended(*maker));
  EXPECT_EQ(remove_abandoned_work_dirs(tmp_), 0u);
  EXPECT_TRUE(fs::exists(work->path()));
  // The same note with Windows line ends names the same maker; a field it does not know names none.
  std::string crlf;
  for (char c : me.to_text()) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const auto through_windows = ProcessIdentity::parse(crlf);
  ASSERT_TRUE(through_windows.has_value()) << crlf;
  EXPECT_EQ(through_windows->start_ticks, me.start_ticks);
  EXPECT_EQ(through_windows->pid_namespace, me.pid_namespace);
  EXPECT_FALSE(ProcessIdentity::parse(me.to_text() + "extra 1\n").has_value());
}

TEST_F(LeftoversTest, AKilledRunsFolderIsRemovedByTheNextRunAndALiveRunsIsLeft) {
  const pid_t killed = start_long_bench();
  const fs::path left = folder_of(killed);
  ASSERT_FALSE(left.empty());
  kill_and_reap(killed, SIGKILL);
  ASSERT_TRUE(fs::exists(left)) << "SIGKILL runs no cleanup: the folder stays until a later start";

  const pid_t live = start_long_bench();
  const fs::path living = folder_of(live);
  ASSERT_FALSE(living.empty());

  auto r = later_run();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(left)) << "the killed run's folder was not removed";
  EXPECT_TRUE(fs::exists(living)) << "a live run's folder was removed";
  // The live one, ended cleanly, removes its own.
  kill_and_reap(live, SIGTERM);
  EXPECT_FALSE(fs::exists(living));
}

TEST_F(LeftoversTest, OnlyFoldersOfThisUserWhoseMakerSurelyEndedAreRemoved) {
  const ProcessIdentity ended = ended_process();
  const fs::path abandoned = folder_with_note("rung-quantise.Abcdef", note(ended));
  ProcessIdentity reused = this_process().value();  // a live pid, started at another time: the pid was reused
  reused.start_ticks += 1;
  const fs::path pid_reused = folder_with_note("rung-conform.Reused", note(reused));
  ProcessIdentity zombie_free = ended;  // the same, in another boot: its pids mean nothing here
  zombie_free.boot_id = "another-boot";
  const fs::path other_boot = folder_with_note("rung-bench.Boot00", note(zombie_free));
  ProcessIdentity elsewhere = ended;
  elsewhere.pid_namespace = "pid:[1]";
  const fs::path other_namespace = folder_with_note("rung-bench.Nspace", note(elsewhere));
  const fs::path live = folder_with_note("rung-bench.Living", note(this_process().value()));
  const fs::path no_note = tmp_ / "rung-bench.NoNote";
  fs::create_directory(no_note);
  const fs::path damaged = folder_with_note("rung-bench.Damage", "pid " + std::to_string(ended.pid) + "\nstart");
  const fs::path not_ours_by_name = folder_with_note("rung-notes", note(ended));
  // A link to a folder with an ended maker's note: never followed, the folder it names left.
  fs::create_directories(dir_ / "elsewhere");
  test::write_text(dir_ / "elsewhere" / kWorkDirOwnerFile, note(ended));
  fs::create_directory_symlink(dir_ / "elsewhere", tmp_ / "rung-bench.Linked");
  // A note that is a link to an ended maker's note.
  const fs::path linked_note = tmp_ / "rung-bench.LnNote";
  fs::create_directory(linked_note);
  fs::create_symlink(abandoned / kWorkDirOwnerFile, linked_note / kWorkDirOwnerFile);

  std::vector<fs::path> theirs;
  if (::geteuid() == 0) {  // only root can give a folder, or a note, to another user
    theirs.push_back(folder_with_note("rung-parity.Theirs", note(ended)));
    ASSERT_EQ(::chown(theirs.back().c_str(), 65534, 65534), 0);
    theirs.push_back(folder_with_note("rung-parity.TheirN", note(ended)));
    ASSERT_EQ(::chown((theirs.back() / kWorkDirOwnerFile).c_str(), 65534, 65534), 0);
  }

  EXPECT_EQ(remove_abandoned_work_dirs(tmp_), 2u);
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_FALSE(fs::exists(pid_reused));
  for (const auto& kept : {other_boot, other_namespace, live, no_note, damaged, not_ours_by_name, linked_note}) {
    EXPECT_TRUE(fs::exists(kept)) << kept;
  }
  EXPECT_TRUE(fs::is_symlink(tmp_ / "rung-bench.Linked"));
  EXPECT_TRUE(fs::exists(dir_ / "elsewhere" / kWorkDirOwnerFile));
  for (const auto& kept : theirs) EXPECT_TRUE(fs::exists(kept)) << kept;
}

TEST_F(LeftoversTest, AZombieThatNoOneReapedYetHasEnded) {
  ProcessIdentity p = this_process().value();
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  // Not reaped: /proc still lists it, as a zombie.
  ASSERT_TRUE(eventually([&] { return test::read_file(fmt::format("/proc/{}/stat", child)).find(") Z") != std::string::npos; },
                         std::chrono::seconds(10)));
  const std::string stat = test::read_file(fmt::format("/proc/{}/stat", child));
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::vector<std::string> f;
  for (std::string w; fields >> w;) f.push_back(w);
  p.pid = child;
  p.start_ticks = std::stoull(f.at(19));
  EXPECT_TRUE(process_has_ended(p));
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(process_has_ended(p));
}

}  // namespace
}  // namespace rung
