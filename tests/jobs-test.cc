// The job runner on the real worker executable, the real ONNX Runtime 1.30.0
// build and the simulated accelerator: each outcome produced for real (a job
// that succeeds, one that fails in its own words, a worker that aborts, one
// that hangs, one that writes no result, one that cannot start), on both
// shapes of job (run to its end; started with a channel); then the same words
// for each failure in every command that runs jobs: probe, bench, engine
// compiles, parity.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>

#include "engine/builder.h"
#include "jobs/measure.h"
#include "jobs/parity_protocol.h"
#include "jobs/runner.h"
#include "model_builder.h"
#include "parity_test_support.h"
#include "rung/bench.h"
#include "rung/parity.h"
#include "rung/probe.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Status = JobOutcome::Status;

constexpr const char* kSim = "rung_sim_ep";

fs::path runtime_library() { return test::runtime_dir("1.30.0") / "libonnxruntime.so.1"; }

// The words every command must use, from the one describe().
std::string crashed_words(int signal) {
  JobOutcome o;
  o.status = Status::kCrashed;
  o.signal = signal;
  return o.describe();
}
std::string timed_out_words(std::chrono::milliseconds deadline) {
  JobOutcome o;
  o.status = Status::kTimedOut;
  o.deadline = deadline;
  return o.describe();
}

TEST(JobOutcomeTest, EachOutcomeIsDescribedInOneLine) {
  EXPECT_EQ(crashed_words(SIGABRT), "the worker was killed by SIGABRT");
  EXPECT_EQ(crashed_words(SIGSEGV), "the worker was killed by SIGSEGV");
  EXPECT_EQ(timed_out_words(std::chrono::seconds(60)), "the worker gave no answer within 60 s and was killed");
  EXPECT_EQ(timed_out_words(std::chrono::milliseconds(1500)), "the worker gave no answer within 1.5 s and was killed");
  JobOutcome failed = JobOutcome::failed("the worker exited with status 1 and no result");
  failed.log_line = "terminate called after throwing";
  EXPECT_EQ(failed.describe(), "the worker exited with status 1 and no result; its log ends: terminate called after throwing");
}

TEST(JobOutcomeTest, AFinishedJobIsOkOnlyWhenItSaysSo) {
  EXPECT_TRUE(JobOutcome::finished({{"ok", true}}).ok());
  const JobOutcome own = JobOutcome::finished({{"ok", false}, {"error", "no adapter"}});
  EXPECT_EQ(own.status, Status::kFailed);
  EXPECT_EQ(own.describe(), "no adapter");  // the job's own words, nothing added
  EXPECT_EQ(JobOutcome::finished({{"error", "no ok field"}}).status, Status::kFailed);
  EXPECT_EQ(JobOutcome::finished(nlohmann::json::array()).status, Status::kFailed);
}

class JobRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-jobs");
    model_ = test::write_elementwise_model(dir_ / "elementwise.onnx", {1, 16, 64});
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProbeJob probe_job(const RungSpec& rung, std::map<std::string, std::string> provider_options = {}) {
    ProbeJob job;
    job.target.runtime_library = runtime_library();
    job.target.model = model_;
    job.target.rung = rung;
    job.target.provider_options = std::move(provider_options);
    job.model_name = "elementwise";
    job.runs = 1;
    job.outputs_dir = dir_ / "work" / "outputs";
    return job;
  }
  static RungSpec cpu() { return *find_rung("cpu"); }
  static RungSpec sim() { return plugin_rung(kSim, test::sim_ep_path().string()); }

  JobOutcome run(const nlohmann::json& job, std::chrono::milliseconds deadline = std::chrono::seconds(30),
                 const fs::path& worker = test::worker_path(), const std::string& kind = "probe") {
    return JobRunner(worker).run({kind, job, deadline, dir_ / "work", {}});
  }

  // A stand-in worker: a shell script (the runner runs any program as `PROGRAM KIND JOB.json`).
  fs::path script(const std::string& body) {
    const fs::path p = dir_ / "worker.sh";
    test::write_text(p, "#!/bin/sh\n" + body + "\n");
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }

  fs::path dir_;
  fs::path model_;
};

TEST_F(JobRunnerTest, AJobThatSucceedsIsOkWithItsResult) {
  const JobOutcome out = run(probe_job(cpu()));
  ASSERT_EQ(out.status, Status::kOk) << out.describe();
  const auto r = out.result.get<ProbeJobResult>();
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.run_ms.size(), 1u);
  EXPECT_GT(out.elapsed_ms, 0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "work" / "outputs" / "output_0.pb"));
}

TEST_F(JobRunnerTest, AJobThatFailsSaysWhyInItsOwnWords) {
  const JobOutcome out = run(probe_job(sim(), {{"fail_at", "compile"}}));
  ASSERT_EQ(out.status, Status::kFailed);
  EXPECT_THAT(out.describe(), HasSubstr("simulated failure at compile"));
  EXPECT_EQ(out.describe(), out.result.at("error").get<std::string>());
  EXPECT_EQ(out.result.at("stage"), "build");
}

TEST_F(JobRunnerTest, AWorkerThatAbortsIsCrashedWithTheSignal) {
  const JobOutcome out = run(probe_job(sim(), {{"abort_at", "compile"}}));
  ASSERT_EQ(out.status, Status::kCrashed) << out.describe();
  EXPECT_EQ(out.signal, SIGABRT);
  EXPECT_THAT(out.describe(), StartsWith(crashed_words(SIGABRT)));
  EXPECT_TRUE(out.result.is_null());
}

TEST_F(JobRunnerTest, AWorkerThatHangsIsKilledAtTheDeadline) {
  const JobOutcome out = run(probe_job(sim(), {{"hang_at", "compile"}}), std::chrono::seconds(1));
  ASSERT_EQ(out.status, Status::kTimedOut) << out.describe();
  EXPECT_EQ(out.deadline, std::chrono::seconds(1));
  EXPECT_THAT(out.describe(), StartsWith(timed_out_words(std::chrono::seconds(1))));
  EXPECT_GE(out.elapsed_ms, 1000.0);
}

TEST_F(JobRunnerTest, AWorkerThatEndsWithoutAResultFailedAndItsLogSaysWhy) {
  const JobOutcome out = run(probe_job(cpu()), std::chrono::seconds(30), script("echo starting\necho \"cannot go on: $1\"\nexit 3"));
  ASSERT_EQ(out.status, Status::kFailed);
  EXPECT_EQ(out.describe(), "the worker exited with status 3 and no result; its log ends: cannot go on: probe");
}

TEST_F(JobRunnerTest, AStaleResultIsNotTakenForANewOne) {
  fs::create_directories(dir_ / "work");
  test::write_text(dir_ / "work" / "result.json", R"({"ok": true})");
  EXPECT_EQ(run(probe_job(cpu()), std::chrono::seconds(30), script("exit 0")).status, Status::kFailed);
}

TEST_F(JobRunnerTest, AResultWrittenBeforeACrashIsNotTheAnswer) {
  // An ok result on disk, then the worker is killed: it crashed, whatever it wrote.
  const JobOutcome out = run(probe_job(cpu()), std::chrono::seconds(30),
                             script("echo '{\"ok\": true}' > \"$(dirname \"$2\")/result.json\"\nkill -KILL $$"));
  EXPECT_EQ(out.status, Status::kCrashed) << out.describe();
  EXPECT_EQ(out.signal, SIGKILL);
}

TEST_F(JobRunnerTest, AResultWrittenByAWorkerThatThenHungIsNotTheAnswer) {
  const JobOutcome out = run(probe_job(cpu()), std::chrono::seconds(1),
                             script("echo '{\"ok\": true}' > \"$(dirname \"$2\")/result.json\"\nexec sleep 30"));
  EXPECT_EQ(out.status, Status::kTimedOut) << out.describe();
}

TEST_F(JobRunnerTest, AWorkerThatCannotStartFailed) {
  const JobOutcome out = run(probe_job(cpu()), std::chrono::seconds(30), dir_ / "no-such-worker");
  ASSERT_EQ(out.status, Status::kFailed);
  EXPECT_THAT(out.describe(), HasSubstr("no-such-worker could not be started"));
}

TEST_F(JobRunnerTest, AMalformedJobIsTheWorkersOwnFailure) {
  const JobOutcome out = run(nlohmann::json{{"target", "nonsense"}});
  ASSERT_EQ(out.status, Status::kFailed);
  EXPECT_THAT(out.describe(), StartsWith("malformed probe job "));
  EXPECT_EQ(out.result.at("stage"), "job");
}

// Nesting far beyond any stack a recursive reader has.
std::string deep_json(std::size_t levels = 50'000) { return std::string(levels, '[') + std::string(levels, ']'); }

// The worker run by hand on a probe job file another process damaged: the result it writes.
std::string worker_result(const fs::path& dir, const std::string& job_text) {
  fs::create_directories(dir / "work");
  test::write_text(dir / "work" / "job.json", job_text);
  auto r = test::run_command("'" + test::worker_path().string() + "' probe '" + (dir / "work" / "job.json").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return test::read_file(dir / "work" / "result.json");
}

TEST_F(JobRunnerTest, ADeeplyNestedJobFileIsMalformedNotACrash) {
  const std::string result = worker_result(dir_, deep_json());
  EXPECT_THAT(result, HasSubstr("malformed probe job"));
  EXPECT_THAT(result, HasSubstr("nested deeper than 64 levels"));
}

TEST_F(JobRunnerTest, AJobFileWithANumberPastItsFieldIsMalformedNotUndefined) {
  // A job whose rung's append method is 1.5e77 (found by fuzz/job-file.cc).
  nlohmann::json job = probe_job(cpu());
  job["target"]["rung"]["append"] = 1.5e77;
  const std::string result = worker_result(dir_, job.dump());
  EXPECT_THAT(result, HasSubstr("malformed probe job"));
  EXPECT_THAT(result, HasSubstr("is not a whole number in range here"));
}

TEST_F(JobRunnerTest, ADeeplyNestedResultIsNoResultNotACrash) {
  const JobOutcome out = run(probe_job(cpu()), std::chrono::seconds(30),
                             script("printf '" + deep_json() + "' > \"$(dirname \"$2\")/result.json\"\nexit 0"));
  ASSERT_EQ(out.status, Status::kFailed);
  EXPECT_THAT(out.describe(), StartsWith("the worker exited with status 0 and no result"));
}

TEST_F(JobRunnerTest, AnUnknownKindIsAUsageErrorOfTheWorker) {
  const JobOutcome out = run(probe_job(cpu()), std::chrono::seconds(30), test::worker_path(), "no-such-kind");
  ASSERT_EQ(out.status, Status::kFailed);
  EXPECT_THAT(out.describe(), StartsWith("the worker exited with status 2 and no result"));
  EXPECT_THAT(test::read_file(dir_ / "work" / "worker.log"), HasSubstr("KIND: probe, bench, compile, parity, conform"));
}

TEST_F(JobRunnerTest, AProgressHookIsCalledWhileTheJobRuns) {
  int calls = 0;
  JobRequest request{"probe", nlohmann::json{}, std::chrono::seconds(30), dir_ / "work", [&] { ++calls; }};
  const JobOutcome out = JobRunner(script("sleep 1")).run(request);
  EXPECT_EQ(out.status, Status::kFailed);
  EXPECT_GE(calls, 1);  // about every 200 ms, while the worker sleeps for a second
}

// A started job: one parity side, fed over its channel.
class StartedJobTest : public JobRunnerTest {
 protected:
  Result<std::unique_ptr<StartedJob>> start(const std::string& rung, std::map<std::string, std::string> options = {},
                                            std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
    ParityJob job;
    job.target.runtime_library = runtime_library();
    job.target.model = model_;
    (rung == "cpu" ? job.target.rung.name : job.target.rung.plugin_library) = rung;
    job.target.provider_options = std::move(options);
    job.outputs_dir = dir_ / "work" / "out";
    return JobRunner(test::worker_path()).start({"parity", job, deadline, dir_ / "work", {}});
  }
  // One input for the elementwise model, and the request naming it.
  std::string request() {
    fs::create_directories(dir_ / "in");
    EXPECT_TRUE(write_tensor_file(test::float_tensor("x", {1, 16, 64}, std::vector<float>(16 * 64, 0.5f)), dir_ / "in" / "input_0.pb"));
    return nlohmann::json{{"run", 0}, {"inputs", (dir_ / "in").string()}}.dump();
  }
};

TEST_F(StartedJobTest, AnswersOverItsChannelThenFinishesOk) {
  auto job = start("cpu");
  ASSERT_TRUE(job) << job.error().message;
  auto ready = (*job)->receive();
  ASSERT_TRUE(ready) << ready.error().message;
  EXPECT_TRUE(nlohmann::json::parse(*ready).at("ready").get<bool>());
  ASSERT_TRUE((*job)->send(request()));
  auto done = (*job)->receive();
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(nlohmann::json::parse(*done).at("done"), 0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "work" / "out" / "0" / "output_0.pb"));
  const JobOutcome out = (*job)->finish(std::chrono::seconds(10));
  EXPECT_EQ(out.status, Status::kOk) << out.describe();
}

TEST_F(StartedJobTest, AWorkerThatAbortsMidwayIsCrashed) {
  auto job = start(test::sim_ep_path().string(), {{"abort_at", "compute"}});
  ASSERT_TRUE(job) << job.error().message;
  ASSERT_TRUE((*job)->receive());
  ASSERT_TRUE((*job)->send(request()));
  auto done = (*job)->receive();
  ASSERT_FALSE(done);
  EXPECT_THAT(done.error().message, StartsWith(crashed_words(SIGABRT)));
  ASSERT_TRUE((*job)->outcome());
  EXPECT_EQ((*job)->outcome()->signal, SIGABRT);
}

TEST_F(StartedJobTest, AWorkerThatHangsIsKilledAtTheDeadlineOfItsAnswer) {
  auto job = start(test::sim_ep_path().string(), {{"hang_at", "compute"}}, std::chrono::seconds(1));
  ASSERT_TRUE(job) << job.error().message;
  ASSERT_TRUE((*job)->receive());
  ASSERT_TRUE((*job)->send(request()));
  auto done = (*job)->receive();
  ASSERT_FALSE(done);
  EXPECT_THAT(done.error().message, StartsWith(timed_out_words(std::chrono::seconds(1))));
  EXPECT_EQ((*job)->outcome()->status, Status::kTimedOut);
}

TEST_F(StartedJobTest, ADeeplyNestedRequestIsAnsweredAsMalformed) {
  auto job = start("cpu");
  ASSERT_TRUE(job) << job.error().message;
  ASSERT_TRUE((*job)->receive());
  ASSERT_TRUE((*job)->send(deep_json()));
  auto done = (*job)->receive();
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_THAT(*done, HasSubstr("malformed request: nested deeper than 64 levels"));
  EXPECT_EQ((*job)->finish(std::chrono::seconds(10)).status, Status::kFailed);
}

TEST_F(JobRunnerTest, ParityRefusesADeeplyNestedAnswerFromAWorker) {
  // A worker that answers its channel (fd 3) with a line nested 50 000 deep.
  ParityOptions o;
  o.ref.model = model_;
  o.ref.runtime = test::runtime_dir("1.30.0").string();
  o.cand = o.ref;
  o.random = 1;
  o.worker = script("printf '" + deep_json() + "\\n' >&3\nsleep 5");
  o.deadline = std::chrono::seconds(10);
  auto rep = run_parity(o);
  ASSERT_FALSE(rep);
  EXPECT_THAT(rep.error().message, HasSubstr("malformed answer from the worker: nested deeper than 64 levels"));
}

// The same words in every command that runs jobs.
class SameWordsTest : public JobRunnerTest {
 protected:
  void SetUp() override {
    JobRunnerTest::SetUp();
    test::make_plugin_dir(dir_);
  }

  // The sim rung's reason in `rung probe`.
  std::string probe_reason(std::chrono::milliseconds deadline) {
    ProbeOptions o;
    o.cache_dir = dir_ / "probe-cache";
    o.models = {{"elementwise", model_, {}}};
    set_search(o.runtimes);
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.probe_runs = 1;
    o.probe_deadline = deadline;
    o.reprobe = true;
    auto out = run_probe(o);
    EXPECT_TRUE(out) << out.error().message;
    for (const auto& r : out ? out->rungs : std::vector<RungOutcome>{}) {
      if (r.rung == kSim) return r.reason;
    }
    return "(no sim rung)";
  }

  // The sim row's failure reason in `rung bench`.
  std::string bench_reason(std::chrono::milliseconds deadline) {
    BenchOptions o;
    o.models = {{"elementwise", model_, {}}};
    o.rungs = {kSim};
    o.warmup = 0;
    o.runs = 1;
    set_search(o.runtimes);
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = test::worker_path();
    o.deadline = deadline;
    auto rep = run_bench(o);
    EXPECT_TRUE(rep) << rep.error().message;
    for (const auto& row : rep ? rep->models.at(0).rows : std::vector<BenchRow>{}) {
      if (row.rung == kSim) return row.failure_reason;
    }
    return "(no sim row)";
  }

  // The model's failure in an engine compile (what `rung prepare` shows).
  std::string compile_failure(std::chrono::milliseconds deadline) {
    EngineBuildPlan plan;
    auto build = load_runtime_build(runtime_library());
    EXPECT_TRUE(build) << build.error().message;
    if (build) plan.build = *build;
    plan.rung = sim();
    plan.models = {{"elementwise", Role::kGeneric, model_, {}, {}, {}}};
    plan.cache_dir = dir_ / "engine-cache";
    plan.worker = test::worker_path();
    plan.deadline = deadline;
    fs::remove_all(plan.cache_dir);
    const std::atomic<bool> stop{false};
    auto landings = build_engines(plan, nullptr, nullptr, stop);
    return landings.size() == 1 ? landings[0].failure : "(no landing)";
  }

  // The candidate side's error in `rung parity`.
  std::string parity_error(std::chrono::milliseconds deadline) {
    ParityOptions o;
    o.ref.model = model_;
    o.ref.runtime = test::runtime_dir("1.30.0").string();
    o.cand = o.ref;
    o.cand.rung = test::sim_ep_path().string();
    o.random = 1;
    o.worker = test::worker_path();
    o.deadline = deadline;
    auto rep = run_parity(o);
    EXPECT_FALSE(rep);
    return rep ? "(it passed)" : rep.error().message;
  }

  static void set_search(RuntimeSearchOptions& s) {
    s.explicit_dir = test::runtime_dir("1.30.0");
    s.include_default_locations = false;
    s.read_environment = false;
  }
};

TEST_F(SameWordsTest, ACrashReadsTheSameInProbeBenchCompileAndParity) {
  ScopedEnv abort("RUNG_SIM_EP_ABORT_AT", "compile");
  const std::string words = crashed_words(SIGABRT);
  const auto deadline = std::chrono::seconds(30);
  EXPECT_THAT(probe_reason(deadline), StartsWith(words));
  EXPECT_THAT(bench_reason(deadline), StartsWith(words));
  EXPECT_THAT(compile_failure(deadline), StartsWith(words));
  EXPECT_THAT(parity_error(deadline), HasSubstr("): " + words));
}

TEST_F(SameWordsTest, ATimeoutReadsTheSameInProbeBenchCompileAndParity) {
  ScopedEnv hang("RUNG_SIM_EP_HANG_AT", "compile");
  const auto deadline = std::chrono::seconds(2);  // the CPU side of each must still finish within it
  const std::string words = timed_out_words(deadline);
  EXPECT_THAT(probe_reason(deadline), StartsWith(words));
  EXPECT_THAT(bench_reason(deadline), StartsWith(words));
  EXPECT_THAT(compile_failure(deadline), StartsWith(words));
  EXPECT_THAT(parity_error(deadline), HasSubstr("): " + words));
}

}  // namespace
}  // namespace rung
