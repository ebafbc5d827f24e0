// Windows under wine: this machine and this process in the words Linux uses,
// so a record made on Windows compares with one made on Linux.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "os/machine.h"
#include "rung/cpus.h"

namespace rung {
namespace {

TEST(WindowsMachine, NamedAsTheKernelNamesItOnLinux) {
  EXPECT_EQ(machine_architecture(), "x86_64");
  EXPECT_STREQ(built_for_system(), "windows");
  // "Windows 10.0.19045 x86_64": the release from the system, not from a manifest's claim.
  EXPECT_THAT(system_description(), ::testing::MatchesRegex("Windows \\d+\\.\\d+\\.\\d+ x86_64"));
}

TEST(WindowsMachine, UsableCpusAreTheProcessAffinity) {
  EXPECT_EQ(usable_cpus(), static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_GE(usable_cpus(), 1);
}

}  // namespace
}  // namespace rung
