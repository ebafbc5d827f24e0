// Every in-tree rung is one module (src/rungs/<rung>.cpp): the descriptors
// hold together, each rung is what the ladder and the docs say it is, and
// what a module says of its session is said by it alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "rung/ladder.h"
#include "rungs/module.h"
#include "test_support.h"

namespace rung {
namespace {
using ::testing::ElementsAre;

TEST(RungModulesTest, EachModuleIsOneRungWithItsOwnIdRankAndNames) {
  const auto& modules = rung_modules();
  ASSERT_GE(modules.size(), 10u);
  std::set<std::string> ids, displays, providers;
  std::set<int> ranks;
  for (const auto& m : modules) {
    EXPECT_TRUE(ids.insert(m.spec.name).second) << "two modules are " << m.spec.name;
    EXPECT_TRUE(displays.insert(m.spec.display).second) << m.spec.name;
    EXPECT_TRUE(providers.insert(m.spec.provider).second) << m.spec.name;
    EXPECT_TRUE(ranks.insert(m.rank).second) << m.spec.name << " shares rank " << m.rank;
    EXPECT_FALSE(m.platforms.empty()) << m.spec.name << " is on no ladder";
    EXPECT_FALSE(m.about.empty()) << m.spec.name;
    EXPECT_NE(m.spec.append, AppendMethod::kPluginDevice) << "a plugin's descriptor is built at run time";
    EXPECT_EQ(module_of(m.spec), &m);
    EXPECT_EQ(find_rung(m.spec.name), find_rung(m.spec.display)) << m.spec.name;
    ASSERT_NE(find_rung(m.spec.name), nullptr) << m.spec.name;
    EXPECT_EQ(find_rung(m.spec.name)->provider, m.spec.provider);
    EXPECT_EQ(m.needs == nullptr, m.needs_text.empty()) << m.spec.name << ": a need in code is said in words too";
  }
  EXPECT_TRUE(is_cpu_floor(modules.back().spec)) << "the CPU is the last rung of every ladder";
  EXPECT_EQ(modules.back().spec.name, "cpu");
  EXPECT_EQ(std::count_if(modules.begin(), modules.end(), [](const RungModule& m) { return is_cpu_floor(m.spec); }), 1) << "one floor";
  EXPECT_EQ(&cpu_floor_rung(), find_rung("cpu"));
  EXPECT_EQ(known_rungs().size(), modules.size());
}

TEST(RungModulesTest, EveryPlatformAModuleNamesIsOneTheTableRecognises) {
  std::set<std::string> platforms;
  for (const auto& p : known_platforms()) platforms.insert(p.id);
  for (const auto& m : rung_modules()) {
    for (const auto& p : m.platforms) {
      EXPECT_TRUE(p == kEveryPlatform || platforms.count(p) == 1) << m.spec.name << " names platform '" << p << "'";
    }
  }
  // A platform's ladder is the modules that name it, by rank, then those on every platform.
  for (const auto& p : known_platforms()) {
    if (p.id == "nvidia") {
      EXPECT_THAT(p.rungs, ElementsAre("tensorrt", "cuda", "xnnpack"));
    }
    if (p.id == "windows-directx") {
      EXPECT_THAT(p.rungs, ElementsAre("directml", "webgpu", "xnnpack"));
    }
  }
}

TEST(RungModulesTest, EveryModuleHasItsRowInTheDocsTableOfIds) {
  const std::string docs = test::read_file(test::source_path("docs/runtimes-and-ladder.md"));
  ASSERT_FALSE(docs.empty());
  for (const auto& m : rung_modules()) {
    EXPECT_NE(docs.find("| `" + m.spec.name + "` | " + m.spec.display), std::string::npos)
        << "docs/runtimes-and-ladder.md has no row for " << m.spec.name;
  }
}

TEST(RungModulesTest, ASessionQuirkIsSaidByTheModuleThatNeedsItAlone) {
  for (const auto& m : rung_modules()) {
    const bool directml = m.spec.name == "directml", xnnpack = m.spec.name == "xnnpack";
    EXPECT_EQ(m.quirks.memory_pattern, !directml) << m.spec.name;
    EXPECT_EQ(m.quirks.parallel_execution, !directml) << m.spec.name;
    EXPECT_EQ(m.quirks.owns_thread_pool, xnnpack) << m.spec.name;
    EXPECT_EQ(m.runs_on_vulkan, m.spec.name == "webgpu") << m.spec.name;
    EXPECT_EQ(m.only_if_built, xnnpack) << m.spec.name;
  }
}

TEST(RungModulesTest, APluginRungHasNoModuleAndItsOptionsAreOnlyItsOwn) {
  const RungSpec plugin = plugin_rung("rung_sim_ep", "/p/librung_sim_ep.so");
  EXPECT_EQ(module_of(plugin), nullptr);
  ProviderSettings s;
  s.fp16 = true;
  s.extra = {{"delay_ms", "3"}};
  EXPECT_EQ(provider_option_map(plugin, s), (std::map<std::string, std::string>{{"delay_ms", "3"}}));
  EXPECT_TRUE(run_option_map(plugin).empty());
  // A plugin whose EP is named like an in-tree rung is still the plugin.
  EXPECT_EQ(module_of(plugin_rung("cuda", "/p/libcuda_ep.so")), nullptr);
}

}  // namespace
}  // namespace rung
