// The cases every system's may_create_files_in (os/this_process.h) is held to: a
// directory this process owns takes new files; a regular file, a missing path and
// a directory under a file do not. Included by tests/os-seam-test.cc (Linux) and
// tests/windows/this-process-test.cc (Windows under wine).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "os/this_process.h"
#include "temp_dir_test.h"

namespace rung {
namespace {

class MayCreateFilesCases : public test::TempDirTest {
 protected:
  MayCreateFilesCases() : TempDirTest("rung-may-create") {}
};

TEST_F(MayCreateFilesCases, OnlyADirectoryTakesNewFiles) {
  EXPECT_TRUE(may_create_files_in(dir_));
  std::filesystem::create_directories(dir_ / "inner");
  EXPECT_TRUE(may_create_files_in(dir_ / "inner"));
  std::ofstream(dir_ / "file") << "a file, not a directory";
  EXPECT_FALSE(may_create_files_in(dir_ / "file"));
  EXPECT_FALSE(may_create_files_in(dir_ / "missing"));
  EXPECT_FALSE(may_create_files_in(dir_ / "file" / "under"));
}

}  // namespace
}  // namespace rung
