// A warm launch opens one runtime build: with a valid probe cache whose record
// of the builds still holds, only the build it names is loaded (not dlopen'ed,
// not mapped); once a build is added, removed or changed (its bytes or its mode:
// its ctime), or a re-probe is asked for, every build is opened again.
// Each launch runs in a child process (fork), which reports the libonnxruntime
// files mapped in it: a build once loaded stays mapped for the process's life.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "model_builder.h"
#include "rung/engine_core.h"
#include "rung/probe.h"
#include "test_support.h"

namespace rung {
namespace {
namespace fs = std::filesystem;

// The libonnxruntime files mapped into this process, canonical.
std::set<std::string> mapped_runtimes() {
  std::set<std::string> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    fs::path file = line.substr(slash);
    if (file.filename().string().rfind("libonnxruntime.so", 0) == 0) out.insert(file.string());
  }
  return out;
}

std::string canonical_of(const fs::path& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p.string() : c.string();
}

// What a launch in a child process reported.
struct Launch {
  bool ok = false;
  std::string error;
  bool from_cache = false;
  std::string chosen;              // canonical path of the build chosen
  std::string version;             // its version, as the probe reported it
  std::set<std::string> mapped;    // when the launch returned
  std::set<std::string> mapped_after_probe;  // the engine: once its background probe reported
};

// Runs `body` in a child; it fills the JSON report, written to `report` and read back here.
Launch in_child(const fs::path& report, const std::function<nlohmann::json()>& body) {
  fs::remove(report);
  const pid_t pid = ::fork();
  if (pid == 0) {
    nlohmann::json j;
    try {
      j = body();
    } catch (const std::exception& e) {
      j = {{"ok", false}, {"error", e.what()}};
    }
    std::ofstream(report) << j.dump();
    ::_exit(0);  // no destructors: an engine's background thread is not waited for
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Launch l;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    l.error = "the child died";
    return l;
  }
  auto j = nlohmann::json::parse(test::read_file(report), nullptr, false);
  if (!j.is_object()) {
    l.error = "no report";
    return l;
  }
  l.ok = j.value("ok", false);
  l.error = j.value("error", "");
  l.from_cache = j.value("from_cache", false);
  l.chosen = j.value("chosen", "");
  l.version = j.value("version", "");
  for (const auto& m : j.value("mapped", nlohmann::json::array())) l.mapped.insert(m.get<std::string>());
  for (const auto& m : j.value("mapped_after_probe", nlohmann::json::array())) l.mapped_after_probe.insert(m.get<std::string>());
  return l;
}

class WarmLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("rung-warm-launch");
    test::ModelBuilder b;
    b.input("x", {1, 8}).node("Relu", {"x"}, {"y"}).output("y", {1, 8});
    b.save(dir_ / "tiny.onnx");
    // The builds rung is tested with, in their own search directory: links to the
    // fetched files, and one copy (1.28.2), whose identity the test may change.
    for (const char* v : {"1.30.0", "1.29", "1.28.2"}) {
      const fs::path from = test::runtime_dir(v);
      const fs::path lib = fs::exists(from / "libonnxruntime.so") ? from / "libonnxruntime.so" : from / "libonnxruntime.so.1";
      if (!fs::exists(lib)) GTEST_SKIP() << "ONNX Runtime " << v << " not fetched (tools/fetch-deps.sh)";
      const fs::path to = runtimes() / (std::string("onnxruntime-") + v);
      fs::create_directories(to);
      if (std::string(v) == "1.28.2") {
        fs::copy_file(lib, to / lib.filename());
        copy_ = to / lib.filename();
        all_.insert(canonical_of(copy_));
      } else {
        fs::create_symlink(lib, to / lib.filename());
        all_.insert(canonical_of(lib));
      }
      if (std::string(v) == "1.30.0") newest_ = canonical_of(lib);
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path runtimes() const { return dir_ / "runtimes"; }

  RuntimeSearchOptions search() const {
    RuntimeSearchOptions s;
    s.explicit_dir = runtimes();
    s.include_default_locations = false;
    s.read_environment = false;
    return s;
  }

  // `rung probe` as the library runs it, in a child process.
  Launch probe(bool reprobe = false, bool open_vouched = true) {
    return in_child(dir_ / "report.json", [&] {
      ProbeOptions o;
      o.cache_dir = dir_ / "cache";
      o.models = {{"tiny", dir_ / "tiny.onnx", {}}};
      o.runtimes = search();
      o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
      o.worker = test::worker_path();
      o.probe_runs = 1;
      o.time_budget_s = 0;
      o.reprobe = reprobe;
      o.open_vouched_build = open_vouched;
      auto r = run_probe(o);
      if (!r) return nlohmann::json{{"ok", false}, {"error", r.error().message}};
      nlohmann::json mapped = mapped_runtimes();
      return nlohmann::json{{"ok", true}, {"from_cache", r->from_cache}, {"chosen", canonical_of(r->runtime_library)}, {"mapped", mapped},
                            {"version", r->runtime_version}};
    });
  }

  // An application's launch: Engine::start, then the background probe's answer.
  Launch engine() {
    return in_child(dir_ / "report.json", [&] {
      core::EngineOptions o;
      o.cache_dir = dir_ / "engine-cache";
      ModelRegistration m;
      m.name = "tiny";
      m.f32 = dir_ / "tiny.onnx";
      o.models = {m};
      o.runtimes = search();
      o.hardware_root = test::fixtures_dir() / "hardware" / "cpu-vm";
      o.worker = test::worker_path();
      o.probe_runs = 1;
      auto e = core::Engine::start(o);
      if (!e) return nlohmann::json{{"ok", false}, {"error", e.error().message}};
      nlohmann::json mapped = mapped_runtimes();
      while (!(*e)->probe_done()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      nlohmann::json after = mapped_runtimes();
      return nlohmann::json{{"ok", true}, {"chosen", canonical_of((*e)->runtime().library)}, {"mapped", mapped}, {"mapped_after_probe", after},
                            {"about", (*e)->about_line()}};
    });
  }

  fs::path dir_;
  fs::path copy_;
  std::set<std::string> all_;
  std::string newest_;
};

// `rung probe` answers and runs nothing: while the record vouches, not even the named build is
// opened; what opening it gave comes from the record. Anything the record does not vouch for,
// or a record that does not keep those facts, opens as an engine's launch does.
TEST_F(WarmLaunchTest, AnAnswerOnlyLaunchOpensNoBuildWhileTheRecordVouchesForIt) {
  auto cold = probe();
  ASSERT_TRUE(cold.ok) << cold.error;
  ASSERT_EQ(cold.chosen, newest_);

  auto answer = probe(false, /*open_vouched=*/false);
  ASSERT_TRUE(answer.ok) << answer.error;
  EXPECT_TRUE(answer.from_cache);
  EXPECT_EQ(answer.chosen, newest_);
  EXPECT_EQ(answer.version, "1.30.0") << "from the record";
  EXPECT_EQ(answer.mapped, std::set<std::string>{}) << "no build opened";

  // A record kept before it held what opening the chosen build gave: the named build is opened, alone.
  const fs::path cache = dir_ / "cache" / "probe.json";
  auto j = nlohmann::json::parse(test::read_file(cache));
  ASSERT_TRUE(j["builds_seen"].contains("chosen_build")) << j.dump();
  j["builds_seen"].erase("chosen_build");
  std::ofstream(cache) << j.dump();
  auto older = probe(false, false);
  ASSERT_TRUE(older.ok) << older.error;
  EXPECT_TRUE(older.from_cache);
  EXPECT_EQ(older.mapped, std::set<std::string>{newest_});

  // A loser changed (its ctime): the record no longer vouches, and every build is opened.
  ASSERT_TRUE(probe(true).ok);  // a fresh record, with the facts
  fs::permissions(copy_, fs::perms::owner_write, fs::perm_options::remove);
  fs::permissions(copy_, fs::perms::owner_write, fs::perm_options::add);
  auto changed = probe(false, false);
  ASSERT_TRUE(changed.ok) << changed.error;
  EXPECT_EQ(changed.mapped, all_);
  EXPECT_EQ(changed.chosen, newest_);
}

TEST_F(WarmLaunchTest, AValidCacheOpensOnlyItsBuildAndAChangedBuildOpensEveryOneAgain) {
  auto cold = probe();
  ASSERT_TRUE(cold.ok) << cold.error;
  EXPECT_FALSE(cold.from_cache);
  EXPECT_EQ(cold.mapped, all_) << "a launch without a cache opens every build";
  // Three CPU-only builds score alike: the newest-named, first in search order, is chosen.
  ASSERT_EQ(cold.chosen, newest_);

  auto warm = probe();
  ASSERT_TRUE(warm.ok) << warm.error;
  EXPECT_TRUE(warm.from_cache);
  EXPECT_EQ(warm.chosen, newest_);
  EXPECT_EQ(warm.mapped, std::set<std::string>{newest_}) << "a warm launch opens the cached build alone";

  // A loser's mode changed, its bytes and mtime not: only its ctime says so, and that is enough.
  const auto mtime = fs::last_write_time(copy_);
  fs::permissions(copy_, fs::perms::owner_write, fs::perm_options::remove);
  fs::permissions(copy_, fs::perms::owner_write, fs::perm_options::add);
  ASSERT_EQ(fs::last_write_time(copy_), mtime);
  auto changed = probe();
  ASSERT_TRUE(changed.ok) << changed.error;
  EXPECT_EQ(changed.mapped, all_) << "a build whose identity changed: every build is opened again";
  EXPECT_TRUE(changed.from_cache) << "the chosen build is unchanged, so the decision stands";
  auto rewarmed = probe();
  EXPECT_EQ(rewarmed.mapped, std::set<std::string>{newest_}) << "the record was kept again with the changed build";

  // A loser's bytes changed (a write: mtime and ctime).
  {
    std::ofstream(copy_, std::ios::app) << '\0';
  }
  EXPECT_EQ(probe().mapped, all_);
  EXPECT_EQ(probe().mapped, std::set<std::string>{newest_});
}

TEST_F(WarmLaunchTest, ABuildAddedOrRemovedOrAReprobeOpensEveryBuild) {
  ASSERT_TRUE(probe().ok);
  ASSERT_EQ(probe().mapped, std::set<std::string>{newest_});

  // Added: a file that is no build. Its load fails, for a reason the record cannot
  // vouch stays true (a dependency may appear), so no launch is warm while it is there.
  fs::create_directories(runtimes() / "onnxruntime-0.1");
  std::ofstream(runtimes() / "onnxruntime-0.1" / "libonnxruntime.so") << "not an ELF file";
  auto added = probe();
  ASSERT_TRUE(added.ok) << added.error;
  EXPECT_TRUE(added.from_cache);
  EXPECT_EQ(added.mapped, all_);
  EXPECT_EQ(probe().mapped, all_) << "a build that failed to load never vouches for the others";

  fs::remove_all(runtimes() / "onnxruntime-0.1");
  EXPECT_EQ(probe().mapped, all_) << "removed: the builds found changed";
  EXPECT_EQ(probe().mapped, std::set<std::string>{newest_});

  // A real build removed.
  std::set<std::string> two = all_;
  two.erase(canonical_of(copy_));
  fs::remove_all(copy_.parent_path());
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(probe().mapped, two);
  EXPECT_EQ(probe().mapped, std::set<std::string>{newest_});

  // A re-probe (--force) decides again on a full discovery.
  auto forced = probe(/*reprobe=*/true);
  ASSERT_TRUE(forced.ok) << forced.error;
  EXPECT_FALSE(forced.from_cache);
  EXPECT_EQ(forced.mapped, two);
  EXPECT_EQ(probe().mapped, std::set<std::string>{newest_});
}

TEST_F(WarmLaunchTest, TheEngineStartsOnTheCachedBuildAlone) {
  auto cold = engine();
  ASSERT_TRUE(cold.ok) << cold.error;
  EXPECT_EQ(cold.mapped, all_);
  auto warm = engine();
  ASSERT_TRUE(warm.ok) << warm.error;
  EXPECT_EQ(warm.chosen, newest_);
  EXPECT_EQ(warm.mapped, std::set<std::string>{newest_}) << "Engine::start opened more than the cached build";
  EXPECT_EQ(warm.mapped_after_probe, std::set<std::string>{newest_}) << "the background probe opened more than the cached build";
}

// `rung probe` itself, warm, under the loader's own account of what it opened: it answers
// and runs nothing, so while the record vouches it opens no build at all (cli/front.cpp).
TEST(WarmLaunchCli, AWarmRungProbeOpensNoBuildAndForceOpensThemAll) {
  const fs::path dir = test::make_temp_dir("rung-warm-launch-cli");
  test::ModelBuilder b;
  b.input("x", {1, 8}).node("Relu", {"x"}, {"y"}).output("y", {1, 8});
  b.save(dir / "tiny.onnx");
  const std::string cmd = "env -u RUNG_ORT_DIR -u RUNG_FORCE_RUNG '" + test::cli_path().string() + "' probe --model tiny=" +
                          (dir / "tiny.onnx").string() + " --cache-dir " + (dir / "cache").string() + " --hardware-root " +
                          (test::fixtures_dir() / "hardware" / "cpu-vm").string() + " --runs 1 --time-budget 0 --json";
  // The libonnxruntime files the loader opened in the CLI's own process (LD_DEBUG=files, pid of the first line).
  auto opened = [&](const std::string& extra) {
    auto r = test::run_command("LD_DEBUG=files " + cmd + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
    std::set<std::string> files;
    std::istringstream err(r.err);
    std::string line, pid;
    while (std::getline(err, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string p = line.substr(0, colon);
      p.erase(0, p.find_first_not_of(' '));
      if (pid.empty() && !p.empty() && p.find_first_not_of("0123456789") == std::string::npos) pid = p;
      if (p != pid) continue;  // a worker child's lines
      auto at = line.find("file=");
      auto end = line.find(" [", at);
      if (at == std::string::npos || end == std::string::npos || line.find("generating link map") == std::string::npos) continue;
      fs::path file = line.substr(at + 5, end - at - 5);
      if (file.filename().string().rfind("libonnxruntime.so", 0) == 0) files.insert(file.string());
    }
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    return std::make_pair(files, j);
  };
  auto [cold_files, cold] = opened("");
  ASSERT_TRUE(cold.is_object());
  const std::size_t found = cold["runtime"]["builds_found"].get<std::size_t>();
  if (found < 2) GTEST_SKIP() << "fewer than two builds beside " << test::cli_path().string();
  EXPECT_EQ(cold_files.size(), found);
  auto [warm_files, warm] = opened("");
  ASSERT_TRUE(warm.is_object());
  EXPECT_EQ(warm["from_cache"], true);
  EXPECT_EQ(warm_files, std::set<std::string>{});
  EXPECT_EQ(warm["runtime"]["library"], cold["runtime"]["library"]);
  EXPECT_EQ(warm["runtime"]["version"], cold["runtime"]["version"]);
  auto [forced_files, forced] = opened("--force");
  EXPECT_EQ(forced_files.size(), found) << "--force opens every build";
  auto [again_files, again] = opened("");
  EXPECT_EQ(again_files.size(), 0u);
  EXPECT_EQ(again["from_cache"], true);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung
