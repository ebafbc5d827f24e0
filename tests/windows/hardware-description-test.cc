// Windows under wine: this machine's description as the system's own calls give
// it (DXGI, the processor records, CPUID), in the form windows.json holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "os/hardware_description.h"

namespace rung {
namespace {

TEST(WindowsHardwareDescription, NamesTheCoresAndFeaturesAndSaysWhatDxgiGave) {
  auto text = native_hardware_description();
  ASSERT_TRUE(text.has_value());
  auto j = nlohmann::json::parse(*text);
  ASSERT_TRUE(j.contains("dxgi_adapters"));
  ASSERT_TRUE(j["dxgi_adapters"].is_array());
  // Either adapters or the reason there are none: never silence.
  if (j["dxgi_adapters"].empty()) {
    ASSERT_TRUE(j.contains("dxgi_problem")) << *text;
  }
  for (const auto& a : j["dxgi_adapters"]) {
    EXPECT_EQ(a["vendor_id"].get<std::string>().size(), 4u) << a.dump();
    EXPECT_TRUE(a["software"].is_boolean());
  }
  const auto& cpu = j["cpu"];
  ASSERT_TRUE(cpu.contains("cores")) << *text;
  const int cores = cpu["cores"].get<int>();
  const int logical = cpu["logical_processors"].get<int>();
  EXPECT_GE(cores, 1);
  EXPECT_GE(logical, cores);
  EXPECT_EQ(static_cast<unsigned>(logical), std::thread::hardware_concurrency());
  EXPECT_FALSE(cpu["name"].get<std::string>().empty());
  // Every x86-64 machine this runs on has SSE4.2; the host's CPUID shows through wine.
  EXPECT_THAT(cpu["features"].get<std::vector<std::string>>(), ::testing::Contains("sse4_2"));
}

}  // namespace
}  // namespace rung
