// A test with a fresh directory of its own, `dir_`, under the system's temporary
// directory and removed after it. Header-only and system-neutral: the Windows
// tests (under wine) and the bodies shared with Linux use it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <system_error>
#include <utility>

namespace rung::test {

class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / (prefix_ + "-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace rung::test
