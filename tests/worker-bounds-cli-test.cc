// Workers bounded and reaped as a group. Every worker runs under a memory limit
// (half the machine's memory by default, --worker-memory-mb to change it), and
// a provider that allocates without end ends its worker with the verdict "ran
// out of memory", in every command that starts workers. What a worker leaves
// running (a provider's forked child that ignores SIGTERM) ends with it, and a
// fork never carries the probe's lock into a process that outlives rung.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include <chrono>
#include <regex>
#include <thread>

#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/limits.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using test::q;

TEST(WorkerMemoryRuleTest, HalfTheMachineAtLeast2048AndAnAskedLimitAsAsked) {
  // Asked by name: as asked, 0 for none, whatever the machine.
  EXPECT_EQ(worker_memory_limit_mib(0, 16384), 0u);
  EXPECT_EQ(worker_memory_limit_mib(1, 16384), 1u);
  EXPECT_EQ(worker_memory_limit_mib(kMaxWorkerMemoryMib, 16384), kMaxWorkerMemoryMib);
  EXPECT_EQ(worker_memory_limit_mib(512, 0), 512u);
  // The default: half, with its floor at 2048 taken at the boundary.
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 16384), 8192u);
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 4097), 2048u);
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 4098), 2049u);
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 4096), 2048u);
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 4094), 2048u);
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 1024), 2048u);
  // A machine that does not say: no limit rather than a guess.
  EXPECT_EQ(worker_memory_limit_mib(kWorkerMemoryDefault, 0), 0u);
}

// Whether `pid` is a running process (a zombie waiting for its reaper is not).
bool running(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  const std::string stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// The processes the simulated accelerator forked, from its trace ("fork <pid> <stage>").
std::vector<long> forked(const fs::path& trace) {
  std::vector<long> pids;
  const std::string text = fs::exists(trace) ? test::read_file(trace) : "";
  static const std::regex line(R"(fork (\d+) )");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it) pids.push_back(std::stol((*it)[1]));
  return pids;
}

class WorkerBoundsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("RUNG_HOST_PROGRAM_PREFIX") != nullptr) GTEST_SKIP() << "under qemu-user a worker's memory limit is not enforced";
    dir_ = test::make_temp_dir("rung-worker-bounds");
    test::make_plugin_dir(dir_);
    test::ModelBuilder b;
    b.input("x", {1, 8}).node("Relu", {"x"}, {"r"}).node("Add", {"r", "x"}, {"y"}).output("y", {1, 8});
    b.save(dir_ / "tiny.onnx");
  }
  void TearDown() override {
    for (long pid : forked(dir_ / "trace.txt")) ::kill(static_cast<pid_t>(pid), SIGKILL);  // a failed test leaves none either
    fs::remove_all(dir_);
  }

  std::string rung(const std::string& env, const std::string& args) const {
    return "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_PLUGIN_DIR " + env + " " + q(test::cli_path()) + " " + args + " --ort-dir " +
           q(test::runtime_dir("1.30.0"));
  }
  std::string plugins() const { return " --plugin-dir " + q(dir_ / "plugins"); }
  std::string sim_library() const { return (dir_ / "plugins" / "librung_sim_ep.so").string(); }
  std::string hw() const { return " --hardware-root " + q(test::fixtures_dir() / "hardware" / "cpu-vm"); }

  fs::path dir_;
};

TEST_F(WorkerBoundsCliTest, AProviderThatAllocatesWithoutEndRunsOutOfMemoryInEveryCommand) {
  const std::string grow = "RUNG_SIM_EP_GROW_AT=compile";
  const std::string model = q(dir_ / "tiny.onnx");
  const std::string said = "the worker ran out of memory: the job reached its limit of 512 MiB";
  struct Case {
    const char* command;
    std::string args;
  };
  const std::vector<Case> cases = {
      {"probe", "probe --model tiny=" + model + " --runs 2 --cache-dir " + q(dir_ / "cache") + plugins() + hw() + " --worker-memory-mb 512 --json"},
      {"bench", "bench tiny=" + model + " --rung rung_sim_ep --runs 2" + plugins() + hw() + " --worker-memory-mb 512"},
      {"parity", "parity --ref " + model + " --cand " + model + ",rung=" + sim_library() + " --random 1 --worker-memory-mb 512"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_command(rung(grow, c.args));
    EXPECT_THAT(r.out + r.err, HasSubstr(said)) << c.command << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("internal error"))) << c.command;
  }
  // conform, with the rung named by its library.
  fs::create_directories(dir_ / "suite" / "test_relu" / "test_data_set_0");
  fs::copy_file(dir_ / "tiny.onnx", dir_ / "suite" / "test_relu" / "model.onnx");
  ASSERT_TRUE(write_tensor_file(test::float_tensor("x", {1, 8}, {1, -1, 1, -1, 1, -1, 1, -1}), dir_ / "suite" / "test_relu" / "test_data_set_0" / "input_0.pb").ok());
  ASSERT_TRUE(write_tensor_file(test::float_tensor("y", {1, 8}, {2, -1, 2, -1, 2, -1, 2, -1}), dir_ / "suite" / "test_relu" / "test_data_set_0" / "output_0.pb").ok());
  const auto r = test::run_command(rung(grow, "conform --suite " + q(dir_ / "suite") + " --rung " + q(sim_library()) + hw() + " --details --worker-memory-mb 512"));
  EXPECT_THAT(r.out + r.err, HasSubstr("ran out of memory")) << r.out << r.err;
}

// The worker whose command line holds `needle`, and its /proc entry's text, looked for while a command runs.
std::string worker_limits_while_running(const std::string& needle, std::string& cmdline) {
  for (int i = 0; i < 400; ++i) {
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::error_code ec;
      if (!fs::exists(e.path() / "cmdline", ec)) continue;
      std::string text = test::read_file(e.path() / "cmdline");
      std::replace(text.begin(), text.end(), '\0', ' ');
      if (text.find("rung-probe-worker") != std::string::npos && text.find(needle) != std::string::npos) {
        cmdline = text;
        // The worker sets its limit first thing after it starts: read again until it has.
        const std::string limits = fs::exists(e.path() / "limits", ec) ? test::read_file(e.path() / "limits") : "";
        if (limits.find("Max data size             unlimited") == std::string::npos) return limits;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

TEST_F(WorkerBoundsCliTest, EveryWorkerGetsTheDefaultLimitUnlessOneIsNamedAndZeroIsNone) {
  const std::string model = q(dir_ / "tiny.onnx");
  // The default, read from a worker while it runs (the provider hangs in compute until the deadline).
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::uint64_t expected = worker_memory_limit_mib(kWorkerMemoryDefault, static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) >> 20);
  ASSERT_GT(expected, 0u);
  fs::create_directories(dir_ / "tmp");
  std::thread run([&] {
    (void)test::run_command(rung("TMPDIR=" + q(dir_ / "tmp") + " RUNG_SIM_EP_HANG_AT=compute",
                                 "bench tiny=" + model + " --rung rung_sim_ep --runs 2 --deadline 8" + plugins() + hw()));
  });
  std::string cmdline;
  const std::string limits = worker_limits_while_running((dir_ / "tmp").string(), cmdline);
  run.join();
  EXPECT_THAT(cmdline, HasSubstr("--memory-limit-mb=" + std::to_string(expected))) << cmdline;
  EXPECT_THAT(limits, ::testing::ContainsRegex("Max data size +" + std::to_string(expected << 20) + " +" + std::to_string(expected << 20))) << limits;

  // Named: 1 MiB is too little to load ONNX Runtime, so the CPU rung itself cannot run; said as the
  // limit it is (the loader's "failed to map segment" is running out of memory), in every command.
  for (const std::string& command : {"bench tiny=" + model + " --rung cpu --runs 2" + hw(),
                                     "prepare --model tiny=" + model + " --cache-dir " + q(dir_ / "cache-1mb") + hw()}) {
    auto r = test::run_command(rung("", command + " --worker-memory-mb 1"));
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_THAT(r.out + r.err, HasSubstr("the worker ran out of memory: the job reached its limit of 1 MiB")) << command << "\n" << r.out << r.err;
    EXPECT_THAT(r.out + r.err, Not(HasSubstr("failed to map segment"))) << command;
  }
  // 0: no limit at all.
  auto r = test::run_command(rung("", "bench tiny=" + model + " --rung cpu --runs 2" + hw() + " --worker-memory-mb 0"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(WorkerBoundsCliTest, WhatAWorkerLeavesRunningEndsWithIt) {
  const std::string model = q(dir_ / "tiny.onnx");
  const std::string env = "RUNG_SIM_EP_FORK_AT=compile RUNG_SIM_EP_TRACE_FILE=" + q(dir_ / "trace.txt");
  const auto r = test::run_command(rung(env, "bench tiny=" + model + " --rung rung_sim_ep --runs 2" + plugins() + hw()));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto pids = forked(dir_ / "trace.txt");
  ASSERT_FALSE(pids.empty()) << "the provider forked nothing: the test tests nothing";
  // SIGKILL is delivered at once, but the reaper (init) may take a moment to notice.
  for (int i = 0; i < 100 && std::any_of(pids.begin(), pids.end(), running); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (long pid : pids) EXPECT_FALSE(running(pid)) << "process " << pid << ", forked by the provider in a worker, outlived it";
}

TEST_F(WorkerBoundsCliTest, AForkInProcessDoesNotCarryTheProbesLockPastRung) {
  // --deadline 5: were the lock still held, the wait for it would be bounded (about 30 s), not the default quarter hour.
  const std::string probe = "probe --in-process --model tiny=" + q(dir_ / "tiny.onnx") + " --runs 2 --deadline 5 --cache-dir " + q(dir_ / "cache") + plugins() + hw();
  const std::string env = "RUNG_SIM_EP_FORK_AT=compile RUNG_SIM_EP_TRACE_FILE=" + q(dir_ / "trace.txt");
  const auto first = test::run_command(rung(env, probe));
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const auto pids = forked(dir_ / "trace.txt");
  ASSERT_FALSE(pids.empty());
  ASSERT_TRUE(running(pids[0])) << "the in-process copy is the application's own child: rung does not end it";
  // The copy runs on, but holds no lock: the next probe takes it at once.
  const auto second = test::run_command(rung("", probe + " --force"));
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_THAT(second.err, Not(HasSubstr("is probing this cache directory")));
}

TEST_F(WorkerBoundsCliTest, AProviderCallingExitZeroIsExitOneInProcessAndARungVerdictInAWorker) {
  const std::string model = q(dir_ / "tiny.onnx");
  const std::string said = "by exit() from a library loaded into this process";
  // In process, at each stage the provider can reach: the command fails by name, writes no cache, and never says 0.
  for (const char* stage : {"factory", "create_ep", "compile", "compute"}) {
    const std::string env = std::string("RUNG_SIM_EP_EXIT_AT=") + stage;
    const fs::path cache = dir_ / (std::string("cache-") + stage);
    for (const std::string& command : {std::string("probe"), std::string("prepare")}) {
      const auto r = test::run_command(rung(env, command + " --in-process --model tiny=" + model + (command == "probe" ? " --runs 2" : "") + " --cache-dir " + q(cache) + plugins() + hw()));
      EXPECT_EQ(r.exit_code, 1) << command << " " << stage << "\n" << r.out << r.err;
      EXPECT_THAT(r.err, HasSubstr(said)) << command << " " << stage;
      EXPECT_FALSE(fs::exists(cache / "probe.json")) << command << " " << stage;
    }
  }
  // In a worker the same provider costs its rung only: the CPU answers and the command succeeds.
  const auto r = test::run_command(rung("RUNG_SIM_EP_EXIT_AT=compile", "probe --model tiny=" + model + " --runs 2 --json --cache-dir " + q(dir_ / "cache") + plugins() + hw()));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"rung\": \"cpu\"")) << r.out;
  EXPECT_THAT(r.out + r.err, Not(HasSubstr(said)));
  // A command that finishes is untouched by the guard: its own status stands.
  const auto fine = test::run_command(rung("", "probe --in-process --model tiny=" + model + " --runs 2 --cache-dir " + q(dir_ / "fine") + plugins() + hw()));
  EXPECT_EQ(fine.exit_code, 0) << fine.out << fine.err;
}

}  // namespace
}  // namespace rung
