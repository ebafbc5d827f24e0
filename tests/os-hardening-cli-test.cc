// The operating-system classes of issue 10, driven through the real CLI and
// real processes: files other users control, inputs that would hang, workers
// that would outlive their parent, verdicts cached from a transient cause,
// numbers that are not numbers.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "model_builder.h"
#include "parity_test_support.h"
#include "session/tensor_file.h"
#include "test_support.h"

extern char** environ;

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// The workers (rung-probe-worker) whose parent is `parent`, as /proc says now.
std::vector<pid_t> workers_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = test::read_file(it->path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || stat.find("(rung-probe-work") == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent && state != 'Z') {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

// Gone, or a zombie nobody has reaped yet: either way it runs no more.
bool is_gone(pid_t pid) {
  const std::string stat = test::read_file(fmt::format("/proc/{}/stat", pid));
  const auto close = stat.rfind(')');
  return stat.empty() || (close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z');
}

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

class OsHardeningCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-harden");
    plugins_ = test::make_plugin_dir(dir_);
    test::ModelBuilder b;
    b.input("x", {1, 32, 32}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 32, 32});
    b.save(dir_ / "tiny.onnx");
  }
  void TearDown() override {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    }
    fs::remove_all(dir_, ec);
  }

  static std::string clean_env() { return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_PLUGIN_DIR "; }
  std::string cli() const { return clean_env() + quoted(test::cli_path()); }
  std::string device() const { return " --hardware-root " + quoted(test::fixtures_dir() / "hardware" / "cpu-vm"); }
  std::string ort() const { return " --ort-dir " + quoted(test::runtime_dir("1.30.0")); }

  std::string probe_args(const std::string& extra) const {
    return "probe --model tiny=" + quoted(dir_ / "tiny.onnx") + " --cache-dir " + quoted(dir_ / "cache") + ort() + device() +
           " --plugin-dir " + quoted(plugins_) + " " + extra;
  }
  std::string bench_args(const std::string& extra) const {
    return "bench " + quoted(dir_ / "tiny.onnx") + ort() + device() + " --plugin-dir " + quoted(plugins_) + " --runs 1 --warmup 0 " + extra;
  }
  std::string parity_args(const std::string& extra) const {
    const std::string model = (dir_ / "tiny.onnx").string();
    return "parity --ref '" + model + ",ort=" + test::runtime_dir("1.30.0").string() + "' --cand '" + model + ",ort=" +
           test::runtime_dir("1.30.0").string() + ",rung=" + plugins_.string() + "/librung_sim_ep.so' --random 2 " + extra;
  }
  std::string prepare_args(const std::string& extra) const {
    return "prepare --model tiny=" + quoted(dir_ / "tiny.onnx") + " --cache-dir " + quoted(dir_ / "cache") + ort() + device() +
           " --plugin-dir " + quoted(plugins_) + " " + extra;
  }

  test::CommandResult run(const std::string& env, const std::string& args) const {
    return test::run_command("timeout 60 " + clean_env() + env + " " + quoted(test::cli_path()) + " " + args);
  }

  // Starts `rung ARGS` as our own child (its pid is rung's), output to files in the test directory.
  pid_t start(const std::string& env, const std::string& args) {
    const std::string command = "exec " + clean_env() + env + " " + quoted(test::cli_path()) +
                                " " + args + " >" + quoted(dir_ / "out") + " 2>" + quoted(dir_ / "err") + " </dev/null";
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
    return pid;
  }

  // Starts `rung ARGS` and waits until one of its workers stays busy (the sim rung's hang) for a second.
  pid_t start_until_a_worker_is_busy(const std::string& env, const std::string& args, std::vector<pid_t>& workers) {
    const pid_t rung = start(env, args);
    const bool busy = eventually(
        [&] {
          const auto before = workers_of(rung);
          if (before.empty()) return false;
          std::this_thread::sleep_for(std::chrono::seconds(1));
          workers = workers_of(rung);
          return std::find(workers.begin(), workers.end(), before.front()) != workers.end();
        },
        std::chrono::seconds(40));
    EXPECT_TRUE(busy) << "no worker stayed busy; " << test::read_file(dir_ / "err");
    return rung;
  }

  // Kills `rung` with `signal` while one of its workers is busy; expects the worker gone soon after.
  void kill_while_a_worker_is_busy(const std::string& env, const std::string& args, int signal) {
    std::vector<pid_t> workers;
    const pid_t rung = start_until_a_worker_is_busy(env, args, workers);
    end(rung, signal, workers);
  }

  void end(pid_t rung, int signal, const std::vector<pid_t>& workers) {
    ASSERT_EQ(::kill(rung, signal), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(rung, &status, 0), rung);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << "status " << status << "; " << test::read_file(dir_ / "err");
    for (pid_t w : workers) {
      EXPECT_TRUE(eventually([&] { return is_gone(w); }, std::chrono::seconds(10))) << "worker " << w << " outlived rung";
      if (!is_gone(w)) ::kill(w, SIGKILL);
    }
  }

  fs::path dir_;
  fs::path plugins_;
};

// --- 1. Files and directories another local user controls ---

TEST_F(OsHardeningCliTest, APluginDirectoryOthersCanWriteIsRefusedUnlessAllowed) {
  ::chmod(plugins_.c_str(), 0777);
  auto r = run("", "doctor" + ort() + device() + " --plugin-dir " + quoted(plugins_));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("plugin directory " + plugins_.string() + ": refused, " + plugins_.string() +
                               " is writable by other users (mode 777); fix that, or allow it with --allow-writable-plugin"));
  r = run("", "doctor" + ort() + device() + " --plugin-dir " + quoted(plugins_) + " --allow-writable-plugin");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("rung_sim_ep"));
}

TEST_F(OsHardeningCliTest, APluginLibraryOthersCanWriteIsRefusedInEveryCommand) {
  ::chmod((plugins_ / "librung_sim_ep.so").c_str(), 0666);
  const std::string refused = "plugin library " + (plugins_ / "librung_sim_ep.so").string() + ": refused";
  for (const std::string& args : {probe_args(""), bench_args(""), parity_args(""), prepare_args("")}) {
    auto r = run("", args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(refused)) << args;
    EXPECT_THAT(r.err, HasSubstr("is writable by other users (mode 666)")) << args;
  }
}

TEST_F(OsHardeningCliTest, ADirectoryFurtherUpThePathCountsToo) {
  // The plugin directory is fine; the one holding it lets others swap it.
  fs::create_directories(dir_ / "shared");
  fs::rename(plugins_, dir_ / "shared" / "plugins");
  ::chmod((dir_ / "shared").c_str(), 0775);
  auto r = run("RUNG_PLUGIN_DIR=" + quoted(dir_ / "shared" / "plugins"), "doctor" + ort() + device());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("RUNG_PLUGIN_DIR=" + (dir_ / "shared" / "plugins").string() + ": refused, " + (dir_ / "shared").string() +
                               " is writable by other users (mode 775)"));
}

TEST_F(OsHardeningCliTest, APluginOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown((plugins_ / "librung_sim_ep.so").c_str(), 65534, 65534), 0);
  auto r = run("", "doctor" + ort() + device() + " --plugin-dir " + quoted(plugins_));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("librung_sim_ep.so is owned by"));
  EXPECT_THAT(r.err, HasSubstr("not by you or root"));
}

TEST_F(OsHardeningCliTest, PluginPathsMustBeAbsolute) {
  auto r = test::run_command("cd " + quoted(dir_) + " && " + cli() + " doctor" + ort() + device() + " --plugin-dir plugins");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("plugin directory plugins: refused, not an absolute path"));
  r = test::run_command("cd " + quoted(dir_) + " && " + cli() + " parity --ref 'tiny.onnx,ort=" + test::runtime_dir("1.30.0").string() +
                        "' --cand 'tiny.onnx,ort=" + test::runtime_dir("1.30.0").string() + ",rung=plugins/librung_sim_ep.so' --random 1");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("plugin library plugins/librung_sim_ep.so: refused, not an absolute path"));
}

TEST_F(OsHardeningCliTest, ARuntimeBehindADirectoryOthersCanWriteIsRefusedUnlessAllowed) {
  // The build itself is trusted; links to it lie where anyone could point them elsewhere.
  fs::create_directories(dir_ / "open" / "ort");
  for (const auto& e : fs::directory_iterator(test::runtime_dir("1.30.0"))) fs::create_symlink(e.path(), dir_ / "open" / "ort" / e.path().filename());
  ::chmod((dir_ / "open").c_str(), 0777);
  const std::string model = (dir_ / "tiny.onnx").string();
  const std::string sides = "--ref '" + model + ",ort=" + (dir_ / "open" / "ort").string() + "' --cand '" + model + ",ort=" +
                            test::runtime_dir("1.30.0").string() + "' --random 1";
  auto r = run("", "parity " + sides);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr((dir_ / "open").string() + " is writable by other users (mode 777); fix that, or allow it with --allow-writable-runtime"));
  r = run("", "parity " + sides + " --allow-writable-runtime");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(OsHardeningCliTest, EveryCommandThatLoadsARuntimeTakesAllowWritableRuntime) {
  for (const std::string command : {"doctor", "probe", "prepare", "bench", "parity", "registry add"}) {
    auto r = test::run_command(cli() + " " + command + " --help");
    EXPECT_THAT(r.out, HasSubstr("--allow-writable-runtime")) << command;
    // registry add only hashes its --plugin; every command that loads one can allow it.
    if (command != "registry add") {
      EXPECT_THAT(r.out, HasSubstr("--allow-writable-plugin")) << command;
    }
  }
}

TEST_F(OsHardeningCliTest, WithoutACacheProbeWorkGoesToAFreshPrivateDirectoryUnderTmpdir) {
  // The old fallback was /tmp/rung-probe-<pid>: a name another user can make first.
  fs::create_directories(dir_ / "tmp");
  ::chmod((dir_ / "tmp").c_str(), 0700);
  std::ofstream(dir_ / "not-a-dir") << "x";  // a cache directory that cannot be made
  std::vector<pid_t> workers;
  const pid_t rung = start_until_a_worker_is_busy(
      "TMPDIR=" + quoted(dir_ / "tmp") + " RUNG_SIM_EP_HANG_AT=compute",
      "probe --model tiny=" + quoted(dir_ / "tiny.onnx") + " --cache-dir " + quoted(dir_ / "not-a-dir" / "cache") + ort() + device() +
          " --plugin-dir " + quoted(plugins_) + " --accept-ratio 1000 --deadline 120",
      workers);
  std::vector<fs::path> made;
  for (const auto& e : fs::directory_iterator(dir_ / "tmp")) made.push_back(e.path());
  ASSERT_EQ(made.size(), 1u);
  EXPECT_THAT(made[0].filename().string(), ::testing::MatchesRegex("probe-work\\.[A-Za-z0-9]{6}"));
  struct stat st {};
  ASSERT_EQ(::lstat(made[0].c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  end(rung, SIGTERM, workers);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(OsHardeningCliTest, OnnxRuntimeTelemetryWritesNothingUnderTmpOrHome) {
  // 1.29 and 1.30 truncate /tmp/mat-debug-<pid>.log and keep a database under
  // ~/.cache/Microsoft/DeveloperTools/ unless ORT_DISABLE_TELEMETRY is set; rung sets it.
  fs::create_directories(dir_ / "home");
  const std::string command = "echo $$ >" + quoted(dir_ / "pid") + "; exec env -u ORT_DISABLE_TELEMETRY HOME=" + quoted(dir_ / "home") +
                              " " + quoted(test::cli_path()) + " " + probe_args("--in-process --accept-ratio 1000");
  std::ofstream(dir_ / "run.sh") << command << "\n";
  auto r = test::run_command("env -u RUNG_ORT_DIR -u RUNG_PLUGIN_DIR sh " + quoted(dir_ / "run.sh"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string pid = test::read_file(dir_ / "pid").substr(0, test::read_file(dir_ / "pid").find('\n'));
  // Only a file written by this run counts: /tmp holds many of other processes that once had this pid.
  const fs::path log = "/tmp/mat-debug-" + pid + ".log";
  std::error_code ec;
  EXPECT_FALSE(fs::exists(log, ec) && fs::last_write_time(log, ec) >= fs::last_write_time(dir_ / "run.sh", ec)) << log;
  EXPECT_FALSE(fs::exists(dir_ / "home" / ".cache" / "Microsoft"));
}

// --- 2. Hangs ---

TEST_F(OsHardeningCliTest, DevZeroAndAFifoAreRefusedAsModelsBeforeAnythingReadsThem) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo.onnx").c_str(), 0600), 0);
  for (const std::string& args : {std::string("bench /dev/zero") + ort() + device(), "bench " + quoted(dir_ / "fifo.onnx") + ort() + device(),
                                  "probe --model z=/dev/zero --cache-dir " + quoted(dir_ / "cache") + ort() + device(),
                                  "probe --model f=" + quoted(dir_ / "fifo.onnx") + " --cache-dir " + quoted(dir_ / "cache") + ort() + device()}) {
    auto r = run("", args);
    EXPECT_NE(r.exit_code, 124) << "hung: " << args;  // timeout's code
    EXPECT_NE(r.exit_code, 0) << args;
    // Refused by the command line's model check (the reader's words) before anything runs: exit 2.
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err + r.out, ::testing::AnyOf(HasSubstr("is a character device, not a file"), HasSubstr("is a FIFO, not a file"))) << args;
  }
}

TEST_F(OsHardeningCliTest, ASecondProbeWaitsForTheLockWithADeadlineAndNamesItsHolder) {
  fs::create_directories(dir_ / "cache");
  // This test process holds the lock, as a hung probe would.
  const int fd = ::open((dir_ / "cache" / "probe.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  const std::string me = std::to_string(::getpid()) + "\n";
  ASSERT_EQ(::write(fd, me.data(), me.size()), static_cast<ssize_t>(me.size()));
  auto r = run("", probe_args("--deadline 0.001"));
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("probe.lock is held by process " + std::to_string(::getpid()) + " ("));
  EXPECT_THAT(r.err, HasSubstr("os-hardening-cli-test"));
  EXPECT_THAT(r.err, HasSubstr("and was not released within"));
}

// --- 3. Children that outlive their parent ---

TEST_F(OsHardeningCliTest, KillingProbeWithSigkillTakesItsBusyWorkerWithIt) {
  kill_while_a_worker_is_busy("RUNG_SIM_EP_HANG_AT=compute", probe_args("--accept-ratio 1000 --deadline 120"), SIGKILL);
}

TEST_F(OsHardeningCliTest, KillingBenchWithSigkillTakesItsBusyWorkerWithIt) {
  kill_while_a_worker_is_busy("RUNG_SIM_EP_HANG_AT=compute", bench_args("--deadline 120"), SIGKILL);
}

TEST_F(OsHardeningCliTest, KillingParityWithSigkillTakesItsWorkersWithIt) {
  kill_while_a_worker_is_busy("RUNG_SIM_EP_HANG_AT=compute", parity_args("--deadline 120"), SIGKILL);
}

TEST_F(OsHardeningCliTest, KillingTheEngineWithSigkillTakesItsWorkerWithIt) {
  kill_while_a_worker_is_busy("RUNG_SIM_EP_HANG_AT=compute", prepare_args("--accept-ratio 1000"), SIGKILL);
}

TEST_F(OsHardeningCliTest, SigtermEndsProbeItsWorkerAndRemovesItsWorkDirectory) {
  kill_while_a_worker_is_busy("RUNG_SIM_EP_HANG_AT=compute", probe_args("--accept-ratio 1000 --deadline 120"), SIGTERM);
  for (const auto& e : fs::directory_iterator(dir_ / "cache")) EXPECT_THAT(e.path().filename().string(), Not(HasSubstr("probe-work")));
}

TEST_F(OsHardeningCliTest, SigintEndsBenchItsWorkerAndRemovesItsWorkDirectory) {
  fs::create_directories(dir_ / "tmp");
  ::chmod((dir_ / "tmp").c_str(), 0700);
  kill_while_a_worker_is_busy("TMPDIR=" + quoted(dir_ / "tmp") + " RUNG_SIM_EP_HANG_AT=compute", bench_args("--deadline 120"), SIGINT);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(OsHardeningCliTest, SigtermEndsParityAndRemovesItsWorkDirectory) {
  fs::create_directories(dir_ / "tmp");
  ::chmod((dir_ / "tmp").c_str(), 0700);
  kill_while_a_worker_is_busy("TMPDIR=" + quoted(dir_ / "tmp") + " RUNG_SIM_EP_HANG_AT=compute", parity_args("--deadline 120"), SIGTERM);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(OsHardeningCliTest, SigtermEndsQuantiseItsWorkerAndRemovesItsWorkDirectory) {
  for (const char* set : {"calibration", "holdout"}) {
    fs::create_directories(dir_ / set);
    const float v = set == std::string("calibration") ? 0.5f : -0.5f;
    ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 32, 32}, std::vector<float>(32 * 32, v)), dir_ / set / "x.pb").ok());
  }
  test::write_text(dir_ / "tiny.gate.json", R"({"gates": [{"decoder": "tensor", "atol": 0.1, "rtol": 0.1}]})");
  // A worker that never answers holds quantise in its scoring (or its proof), the work directory made.
  fs::create_directories(dir_ / "hung");
  test::write_text(dir_ / "hung" / "rung-probe-worker", "#!/bin/sh\nwhile :; do sleep 0.2; done\n");
  ::chmod((dir_ / "hung" / "rung-probe-worker").c_str(), 0755);
  fs::create_directories(dir_ / "tmp");
  ::chmod((dir_ / "tmp").c_str(), 0700);
  // --target npu: the CPU has no integer kernel worth converting a lone Relu and Add into, and would refuse before any worker.
  const std::string args = "quantise " + quoted(dir_ / "tiny.onnx") + " --form int8 --target npu --calibration " + quoted(dir_ / "calibration") +
                           " --holdout " + quoted(dir_ / "holdout") + " --gate " + quoted(dir_ / "tiny.gate.json") + " --out " +
                           quoted(dir_ / "tiny_i8.onnx") + " --ort " + quoted(test::runtime_dir("1.30.0")) + " --deadline 120";
  kill_while_a_worker_is_busy("TMPDIR=" + quoted(dir_ / "tmp") + " RUNG_PROBE_WORKER=" + quoted(dir_ / "hung" / "rung-probe-worker"), args, SIGTERM);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
  EXPECT_FALSE(fs::exists(dir_ / "tiny_i8.onnx"));
}

TEST_F(OsHardeningCliTest, AWorkerWhoseParentIsGoneDoesNotStart) {
  // As if rung died between starting the worker and the worker tying itself to it.
  std::ofstream(dir_ / "job.json") << "{}";
  auto r = test::run_command(quoted(test::worker_path()) + " probe " + quoted(dir_ / "job.json") + " --parent=999999");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("process 999999 that started this job is gone"));
  EXPECT_FALSE(fs::exists(dir_ / "result.json"));
}

// --- 4. Decisions cached from a transient cause ---

TEST_F(OsHardeningCliTest, ATimeOutUnderATinyDeadlineIsNotTheNextProbesAnswer) {
  auto tiny = run("", probe_args("--deadline 0.001 --json"));
  auto j = nlohmann::json::parse(tiny.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << tiny.out << tiny.err;
  ASSERT_THAT(j.dump(), HasSubstr("timed out"));
  auto plain = run("", probe_args("--json --accept-ratio 1000"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto k = nlohmann::json::parse(plain.out);
  EXPECT_EQ(k["from_cache"], false);
  EXPECT_THAT(k.dump(), Not(HasSubstr("timed out")));
}

// --- 5. Numbers checked where they are parsed ---

TEST_F(OsHardeningCliTest, NumbersThatAreNotFiniteOrOutOfRangeAreUsageErrors) {
  const std::string model = quoted(dir_ / "tiny.onnx");
  const std::string probe = "probe --model tiny=" + model + " --cache-dir " + quoted(dir_ / "cache");
  const std::string prepare = "prepare --model tiny=" + model + " --cache-dir " + quoted(dir_ / "cache");
  const std::string bench = "bench " + model;
  const std::string parity = "parity --ref " + model + " --cand " + model + " --random 1";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {probe + " --deadline inf", "--deadline: inf is out of range"},
      {probe + " --deadline nan", "--deadline: nan is out of range"},
      {probe + " --deadline 1e300", "--deadline: 1e300 is out of range"},
      {probe + " --deadline 0", "--deadline: 0 is out of range"},
      {probe + " --deadline=-1", "--deadline: -1 is out of range"},
      {probe + " --accept-ratio nan", "--accept-ratio: nan is out of range"},
      {probe + " --threads 100000", "--threads: 100000 is out of range; expected a whole number of threads from 0 to"},
      {probe + " --runs 99999999999", "--runs: 99999999999 is out of range"},
      {prepare + " --threads 100000", "--threads: 100000 is out of range"},
      {prepare + " --accept-ratio inf", "--accept-ratio: inf is out of range"},
      {bench + " --duration nan", "--duration: nan is out of range"},
      {bench + " --duration inf", "--duration: inf is out of range"},
      {bench + " --deadline nan", "--deadline: nan is out of range"},
      {bench + " --threads=-1", "--threads: -1 is out of range"},
      {bench + " --rounds 0", "--rounds: 0 is out of range"},
      {bench + " --warmup=-1", "--warmup: -1 is out of range"},
      {parity + " --deadline nan", "--deadline: nan is out of range"},
      {"parity --ref " + model + " --cand " + model + " --random 0", "--random: 0 is out of range"},
      {"parity --ref " + model + " --cand '" + (dir_ / "tiny.onnx").string() + ",threads=100000' --random 1",
       "threads=100000 is more than the"},
  };
  for (const auto& [args, said] : cases) {
    auto r = run("", args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(said)) << args;
  }
}

}  // namespace
}  // namespace rung
