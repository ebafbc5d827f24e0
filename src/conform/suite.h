// The tests in suite folders laid out as ONNX's backend tests are: a folder per
// test with model.onnx and test_data_set_N/. A folder without model.onnx but
// with data.json is a download stub (ONNX's real/ models): listed, skipped.
#pragma once

#include <filesystem>
#include <vector>

#include "rung/conform.h"

namespace rung {

// Each folder may be a test, a suite (a folder of tests) or a folder of suites.
// Sorted by id. kNotFound for a folder that is not there or holds no test.
Result<std::vector<ConformTest>> find_tests(const std::vector<std::filesystem::path>& folders);

// The operator a test exercises, from its graph's op types and its name (see suite.cpp).
std::string test_operator(const std::string& test_name, const std::vector<std::string>& op_types);

}  // namespace rung
