// What the C ABI's tests share: the variables ctest sets (tests/CMakeLists.txt's
// RUNG_ABI_TEST_ENV) and the reference the C++ engine core wrote (abi-reference).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace abi_test {

// The variable's value; the test fails naming it when ctest did not set it.
inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') ADD_FAILURE() << name << " is not set (ctest sets it)";
  return v == nullptr ? std::string() : std::string(v);
}

// reference.txt's KEY=VALUE lines: the rung, model id, input and output names the engine core gave.
inline std::map<std::string, std::string> reference() {
  std::map<std::string, std::string> out;
  std::ifstream in(std::filesystem::path(env("RUNG_TEST_REFERENCE_DIR")) / "reference.txt");
  for (std::string line; std::getline(in, line);) {
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace abi_test
