// Engine builds whose worker really dies (SIGKILL as the out-of-memory killer
// sends it, SIGABRT from the simulated accelerator's compiler, an exit without
// an answer, a hang killed at the deadline): a death is a strike, tried again at
// the next start, refused only after deaths in two launches in a row; a clean
// failure (the provider said no) is a verdict at once, as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/builder.h"
#include "model_builder.h"
#include "probe/attempts.h"
#include "rung/engine_core.h"
#include "rung/ladder.h"
#include "rung/runtime.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;
using test::ScopedEnv;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kSim = "rung_sim_ep";

const std::string kRefusedTail = " in 2 launches in a row; this rung is not tried again for this model until the file or the runtime changes";
const std::string kOnceTail = "; died once, will retry at the next start";

// Element-wise, claimed whole by the simulated accelerator; `add_name` names its Add node.
fs::path write_model(const fs::path& file, int width, const std::string& add_name = "") {
  test::ModelBuilder b;
  b.input("x", {1, 16, width})
      .initializer("w", {1, 16, width}, std::vector<float>(static_cast<std::size_t>(16 * width), 0.5f))
      .node("Mul", {"x", "w"}, {"m"})
      .node("Add", {"m", "x"}, {"a"}, add_name)
      .node("Relu", {"a"}, {"y"})
      .output("y", {1, 16, width});
  return b.save(file);
}

std::vector<fs::path> files_named(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file() && name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(it->path());
    }
  }
  return out;
}

int lines_in(const fs::path& file) {
  const std::string text = test::read_file(file);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

class EngineStrikesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-engine-strikes");
    test::make_plugin_dir(dir_);
    write_model(dir_ / "small.onnx", 32);
    write_model(dir_ / "poisoned.onnx", 64, "poison_add");
    // rung-probe-worker, except that an engine compile of poisoned.onnx on a
    // compiling rung first counts a line in `tries`, then does what `die` says:
    // kill: SIGKILL, as the out-of-memory killer sends it; abort: the simulated
    // accelerator aborts in its compiler (SIGABRT); hang: it sleeps in its
    // compiler until the deadline; exit: exits with status 7 and no answer.
    worker_ = dir_ / "dying-worker";
    std::ofstream(worker_) << "#!/bin/sh\n"
                           << "d='" << dir_.string() << "'\n"
                           << "if [ \"$1\" = compile ] && grep -q 'poisoned.onnx' \"$2\" && grep -q '\"compiles_engines\": true' \"$2\"; then\n"
                           << "  echo try >> \"$d/tries\"\n"
                           << "  case \"$(cat \"$d/die\" 2>/dev/null)\" in\n"
                           << "    kill) kill -KILL $$ ;;\n"
                           << "    abort) RUNG_SIM_EP_ABORT_AT=compile; export RUNG_SIM_EP_ABORT_AT ;;\n"
                           << "    hang) RUNG_SIM_EP_HANG_AT=compile; export RUNG_SIM_EP_HANG_AT ;;\n"
                           << "    exit) exit 7 ;;\n"
                           << "  esac\n"
                           << "fi\n"
                           << "exec '" << test::worker_path().string() << "' \"$@\"\n";
    fs::permissions(worker_, fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void die(const std::string& how) { std::ofstream(dir_ / "die", std::ios::trunc) << how; }
  void live() { fs::remove(dir_ / "die"); }
  int tries() const { return lines_in(dir_ / "tries"); }

  core::EngineOptions options() {
    core::EngineOptions o;
    o.cache_dir = dir_ / "cache";
    o.models = {{"small", Role::kDetector, dir_ / "small.onnx", {}, {}, {}},
                {"poisoned", Role::kGeneric, dir_ / "poisoned.onnx", {}, {}, {}}};
    o.runtimes.explicit_dir = test::runtime_dir("1.30.0");
    o.runtimes.include_default_locations = false;
    o.runtimes.read_environment = false;
    o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
    o.plugin_dirs = {dir_ / "plugins"};
    o.worker = worker_;
    o.acceptance_ratio = 1000;  // the simulated accelerator is not faster; admit it
    o.probe_runs = 1;
    return o;
  }

  // One launch of the application, to its end: the progress line's failures, and where poisoned runs.
  struct Launch {
    std::vector<std::string> failures;
    std::string about, poisoned_rung;
  };
  Launch launch() {
    auto e = core::Engine::start(options());
    EXPECT_TRUE(e) << e.error().message;
    if (!e) return {};
    (*e)->wait_until_settled();
    EXPECT_EQ((*e)->chosen_rung(), kSim);  // the probe model, small, is never the one that dies
    Launch out{(*e)->progress().failures, (*e)->about_line(), {}};
    auto job = (*e)->open_job();
    auto s = job ? (*job)->session("poisoned") : Result<core::Session*>(job.error());
    out.poisoned_rung = s ? (*s)->rung() : s.error().message;
    return out;
  }

  static std::string stays(const std::string& why) { return "poisoned stays on CPU: its rung_sim_ep engine failed to build (" + why + ")"; }

  // The sim rung's engine directory: its strikes.json and its failure records.
  std::vector<fs::path> failure_records() const { return files_named(dir_ / "cache", ".failed.json"); }
  nlohmann::json strikes() const {
    auto files = files_named(dir_ / "cache" / "engines", "strikes.json");
    for (const auto& f : files) {
      auto j = nlohmann::json::parse(test::read_file(f), nullptr, false);
      if (j.is_object() && j.contains("strikes") && !j["strikes"].empty()) return j;
    }
    return nlohmann::json::object();
  }

  // build_engines as the engine calls it, on the sim rung alone, in the launch named.
  std::vector<EngineLanding> build(const std::string& launch, const fs::path& worker, std::chrono::milliseconds deadline = std::chrono::seconds(60)) {
    EngineBuildPlan plan;
    auto runtime = load_runtime_build(test::runtime_dir("1.30.0") / "libonnxruntime.so.1");
    EXPECT_TRUE(runtime) << runtime.error().message;
    if (runtime) plan.build = *runtime;
    plan.rung = plugin_rung(kSim, test::sim_ep_path().string());
    plan.models = {{"poisoned", Role::kGeneric, dir_ / "poisoned.onnx", {}, {}, {}}};
    plan.cache_dir = dir_ / "cache";
    plan.worker = worker;
    plan.deadline = deadline;
    plan.launch = launch;
    const std::atomic<bool> stop{false};
    return build_engines(plan, nullptr, nullptr, stop);
  }
  std::string build_failure(const std::string& launch, std::chrono::milliseconds deadline = std::chrono::seconds(60)) {
    auto landings = build(launch, worker_, deadline);
    if (landings.size() != 1) return "(no landing)";
    return landings[0].file.empty() ? landings[0].failure : "(built)";
  }

  fs::path dir_, worker_;
};

// One death: this launch says so and tries nothing more; the next start tries
// again, and the engine it builds clears the strike.
TEST_F(EngineStrikesTest, OneDeathIsRetriedAtTheNextStartAndABuildClearsIt) {
  die("kill");
  auto first = launch();
  EXPECT_THAT(first.failures, ElementsAre(stays("the worker was killed by SIGKILL" + kOnceTail)));
  EXPECT_EQ(first.poisoned_rung, "cpu");
  EXPECT_EQ(tries(), 1);  // no retry within the launch
  EXPECT_TRUE(failure_records().empty()) << "a death was recorded as a verdict";
  auto j = strikes();
  ASSERT_TRUE(j.contains("last")) << j.dump();
  ASSERT_EQ(j["strikes"].size(), 1u) << j.dump();
  EXPECT_EQ(j["strikes"].begin().value(), 1);
  const auto& note = j["last"].begin().value();
  EXPECT_EQ(note["what"], "the worker was killed by SIGKILL");
  EXPECT_THAT(note["launch"].get<std::string>(), HasSubstr("pid "));  // which launch
  EXPECT_FALSE(note["when"].get<std::string>().empty());              // and when

  live();
  auto second = launch();
  EXPECT_TRUE(second.failures.empty()) << second.failures.front();
  EXPECT_EQ(second.poisoned_rung, kSim);
  EXPECT_EQ(tries(), 2);
  EXPECT_TRUE(strikes().empty()) << strikes().dump();
  EXPECT_TRUE(failure_records().empty());
}

// Deaths in two separate launches: refused with the words saying so, recorded
// like a verdict: the third start tries nothing, whatever the worker would do
// now; a changed model file is another file and is built.
TEST_F(EngineStrikesTest, DeathsInTwoLaunchesInARowRefuseTheRungForThatModelFile) {
  die("kill");
  EXPECT_THAT(launch().failures, ElementsAre(stays("the worker was killed by SIGKILL" + kOnceTail)));
  auto second = launch();
  const std::string refused = "the worker was killed by SIGKILL" + kRefusedTail;
  EXPECT_THAT(second.failures, ElementsAre(stays(refused)));
  EXPECT_THAT(second.about, HasSubstr("poisoned engine failed: " + refused));
  EXPECT_EQ(tries(), 2);
  auto records = failure_records();
  ASSERT_EQ(records.size(), 1u);
  auto record = nlohmann::json::parse(test::read_file(records[0]));
  EXPECT_EQ(record["reason"], refused);
  EXPECT_EQ(record["deaths"], 2);
  EXPECT_TRUE(strikes().empty()) << "the record carries the refusal: " << strikes().dump();

  live();
  auto third = launch();
  EXPECT_THAT(third.failures, ElementsAre(stays(refused)));
  EXPECT_EQ(third.poisoned_rung, "cpu");
  EXPECT_EQ(tries(), 2);  // not tried again

  write_model(dir_ / "poisoned.onnx", 64, "changed_add");
  auto changed = launch();
  EXPECT_TRUE(changed.failures.empty()) << changed.failures.front();
  EXPECT_EQ(changed.poisoned_rung, kSim);
  EXPECT_EQ(tries(), 3);
}

// A clean failure is a verdict at once, as before, even right after a death:
// the provider's own words, recorded, and the strike gone.
TEST_F(EngineStrikesTest, ACleanFailureIsAVerdictAtOnceEvenAfterADeath) {
  die("kill");
  EXPECT_THAT(launch().failures, ElementsAre(stays("the worker was killed by SIGKILL" + kOnceTail)));
  live();
  ScopedEnv reject("RUNG_SIM_EP_REJECT_NODES", "poison");
  const std::string verdict = "RungSimAccelerator: the compiler rejects node 'poison_add'";
  EXPECT_THAT(launch().failures, ElementsAre(stays(verdict)));
  EXPECT_EQ(tries(), 2);
  EXPECT_EQ(failure_records().size(), 1u);
  EXPECT_TRUE(strikes().empty()) << strikes().dump();
  EXPECT_THAT(launch().failures, ElementsAre(stays(verdict)));
  EXPECT_EQ(tries(), 2);  // a verdict is not tried again
}

// A second build in the launch that saw the death neither runs the worker again
// nor counts a second strike: two builds in one launch are one launch.
TEST_F(EngineStrikesTest, TwoBuildsInOneLaunchAreOneStrikeAndTheWorkerRunsOnce) {
  die("abort");  // the provider's compiler really aborts
  const std::string once = "the worker was killed by SIGABRT" + kOnceTail;
  EXPECT_EQ(build_failure("launch A"), once);
  EXPECT_EQ(build_failure("launch A"), once);
  EXPECT_EQ(tries(), 1);
  EXPECT_TRUE(failure_records().empty());
  EXPECT_EQ(strikes()["strikes"].begin().value(), 1);
  // The next launch tries again; its death is the second in a row.
  EXPECT_EQ(build_failure("launch B"), "the worker was killed by SIGABRT" + kRefusedTail);
  EXPECT_EQ(tries(), 2);
  live();
  EXPECT_EQ(build_failure("launch C"), "the worker was killed by SIGABRT" + kRefusedTail);
  EXPECT_EQ(tries(), 2);
}

// Every way a worker ends without its answer is a death, not a verdict: an exit
// with no result, and a hang killed at the deadline.
TEST_F(EngineStrikesTest, AnExitWithoutAnAnswerAndAHangAreDeathsToo) {
  die("exit");
  EXPECT_EQ(build_failure("launch A"), "the worker exited with status 7 and no result" + kOnceTail);
  EXPECT_TRUE(failure_records().empty());
  die("hang");
  EXPECT_EQ(build_failure("launch B", std::chrono::seconds(2)),
            "the worker gave no answer within 2 s and was killed" + kRefusedTail);
  EXPECT_EQ(tries(), 2);
}

// A worker that cannot be started says nothing about the model: no verdict, no strike.
TEST_F(EngineStrikesTest, AWorkerThatCannotBeStartedIsNeitherAVerdictNorAStrike) {
  auto landings = build("launch A", dir_ / "no-such-worker");
  ASSERT_EQ(landings.size(), 1u);
  EXPECT_THAT(landings[0].failure, HasSubstr("could not be started"));
  EXPECT_TRUE(failure_records().empty());
  EXPECT_TRUE(strikes().empty()) << strikes().dump();
  live();
  EXPECT_EQ(build_failure("launch A"), "(built)");
}

// A damaged strike file is ignored and rewritten, whole and readable.
TEST_F(EngineStrikesTest, ADamagedStrikeFileIsIgnoredAndRewritten) {
  die("kill");
  ASSERT_EQ(build_failure("launch A"), "the worker was killed by SIGKILL" + kOnceTail);
  auto files = files_named(dir_ / "cache" / "engines", "strikes.json");
  ASSERT_EQ(files.size(), 1u);
  for (const std::string& damage : {std::string(R"({"fingerprint": 5, "strikes": []})"), std::string(100'000, '['), std::string("{\"strikes\":")}) {
    std::ofstream(files[0], std::ios::trunc) << damage;
    // The damage forgot the strike: this death is a first one again, and the file is whole.
    EXPECT_EQ(build_failure("launch " + std::to_string(damage.size())), "the worker was killed by SIGKILL" + kOnceTail);
    auto j = nlohmann::json::parse(test::read_file(files[0]), nullptr, false);
    ASSERT_TRUE(j.is_object()) << test::read_file(files[0]).substr(0, 200);
    EXPECT_EQ(j["strikes"].begin().value(), 1);
  }
  EXPECT_TRUE(failure_records().empty());
}

// The ledger itself: a death seen from outside counts once per launch, and its particulars are kept.
TEST(StrikeLedgerTest, ADeathSeenFromOutsideCountsOncePerLaunch) {
  const fs::path dir = test::make_temp_dir("rung-strike-ledger");
  {
    AttemptLedger ledger(dir, "fp");
    EXPECT_EQ(ledger.strike("f32/m-1", "A", "the worker was killed by SIGKILL"), 1);
    EXPECT_EQ(ledger.strike("f32/m-1", "A", "the worker was killed by SIGSEGV"), 1);
    EXPECT_FALSE(ledger.refused("f32/m-1"));
  }
  {
    AttemptLedger next(dir, "fp");
    ASSERT_NE(next.last("f32/m-1"), nullptr);
    EXPECT_EQ(next.last("f32/m-1")->launch, "A");
    EXPECT_EQ(next.last("f32/m-1")->what, "the worker was killed by SIGKILL");
    EXPECT_EQ(next.strike("f32/m-1", "B", "the worker was killed by SIGKILL"), 2);
    EXPECT_TRUE(next.refused("f32/m-1"));
    next.end("f32/m-1");
    EXPECT_EQ(next.last("f32/m-1"), nullptr);
  }
  EXPECT_EQ(AttemptLedger(dir, "fp").strikes("f32/m-1"), 0);
  EXPECT_EQ(AttemptLedger(dir, "another").strikes("f32/m-1"), 0);
  fs::remove_all(dir);
}

// An engine carries what it was built from (identity.json beside it): a cached engine is used only when its
// source's hash, its own bytes and the build it was made under are the ones recorded, else it is rebuilt.
TEST_F(EngineStrikesTest, ACachedEngineThatIsNotThisModelsIsRebuiltNeverRun) {
  auto first = build("one", worker_);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_FALSE(first[0].file.empty()) << first[0].failure;
  const fs::path engine = first[0].file, identity = fs::path(engine).replace_extension(".identity.json");
  ASSERT_TRUE(fs::is_regular_file(identity));
  const std::string built = test::read_file(engine);
  ASSERT_EQ(tries(), 1);
  const auto again = [&](const std::string& launch) {
    auto l = build(launch, worker_);
    EXPECT_EQ(l.size(), 1u);
    return l.empty() ? EngineLanding{} : l[0];
  };
  // Untouched, or touched with the same bytes: used as it is, nothing compiled.
  auto hit = again("two");
  EXPECT_EQ(hit.file, engine);
  EXPECT_EQ(hit.replaced, "");
  fs::last_write_time(engine, fs::last_write_time(engine) + std::chrono::hours(1));
  hit = again("three");
  EXPECT_EQ(hit.replaced, "");
  EXPECT_EQ(tries(), 1);

  // Each field alone: another model's file in the slot, no identity, an identity of another source, of another build.
  fs::copy_file(dir_ / "small.onnx", engine, fs::copy_options::overwrite_existing);
  auto swapped = again("four");
  EXPECT_THAT(swapped.replaced, HasSubstr("its bytes changed since it was built"));
  EXPECT_EQ(swapped.file, engine);
  EXPECT_EQ(test::read_file(engine), built) << "the swapped engine was kept";
  EXPECT_EQ(tries(), 2);

  fs::remove(identity);
  EXPECT_THAT(again("five").replaced, HasSubstr("it has no identity"));
  EXPECT_EQ(tries(), 3);

  const auto edit = [&](const char* key, const std::string& value) {
    auto j = nlohmann::json::parse(test::read_file(identity));
    j[key] = value;
    std::ofstream(identity, std::ios::trunc) << j.dump();
  };
  edit("source_sha256", std::string(64, 'a'));
  EXPECT_THAT(again("six").replaced, HasSubstr("it was built from another file (sha256 aaaaaaaaaaaa"));
  EXPECT_EQ(tries(), 4);
  edit("fingerprint", "0123456789abcdef");
  EXPECT_THAT(again("seven").replaced, HasSubstr("it was built for another runtime, device or rung"));
  EXPECT_EQ(tries(), 5);
  EXPECT_EQ(again("eight").replaced, "") << "the rebuilt engine's identity holds";
  EXPECT_EQ(tries(), 5);
}

// In process there is no worker: the launch itself dies (here the compiler
// aborts the whole `rung prepare --in-process`), and the next launch learns it
// from the attempt file. Two such launches refuse the engine; the third start
// says so, exits 1 and lives.
TEST_F(EngineStrikesTest, InProcessTwoLaunchesThatDieBuildingItRefuseIt) {
  const std::string prepare = "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG -u RUNG_SOFTWARE_GPU -u RUNG_SIM_EP_ABORT_AT {} '" + test::cli_path().string() +
                              "' prepare --in-process --model small=" + (dir_ / "small.onnx").string() + " --model poisoned=" +
                              (dir_ / "poisoned.onnx").string() + " --cache-dir " + (dir_ / "cache").string() + " --ort-dir " +
                              test::runtime_dir("1.30.0").string() + " --hardware-root " +
                              (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --plugin-dir " + (dir_ / "plugins").string() +
                              " --accept-ratio 1000";
  auto with = [&](const std::string& env) {
    std::string c = prepare;
    c.replace(c.find("{}"), 2, env);
    return test::run_command(c);
  };
  // The first launch probes and builds both; then poisoned's engine is gone, and the probe's answer is cached.
  auto ok = with("");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto engines = files_named(dir_ / "cache" / "engines", ".onnx");
  std::size_t removed = 0;
  for (const auto& e : engines) removed += e.filename().string().rfind("poisoned-", 0) == 0 && fs::remove(e);
  ASSERT_EQ(removed, 1u);
  // Two launches die in its compile (SIGABRT: exit status 134 from the shell).
  for (int i = 0; i < 2; ++i) {
    auto dead = with("RUNG_SIM_EP_ABORT_AT=compile");
    ASSERT_NE(dead.exit_code, 0) << dead.out << dead.err;
    ASSERT_NE(dead.exit_code, 1) << "launch " << i << " did not die in the build: " << dead.err;
  }
  auto third = with("");
  EXPECT_EQ(third.exit_code, 1) << third.out << third.err;
  EXPECT_THAT(third.err, HasSubstr(stays("the process died while building it" + kRefusedTail)));
  EXPECT_EQ(failure_records().size(), 1u);
}

}  // namespace
}  // namespace rung
