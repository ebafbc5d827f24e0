// Calibration and holdout sets by content: each input file's SHA-256, the
// set's hash over its sorted file hashes, and the rule that the two sets share
// no file (a holdout that overlaps the calibration set scores what it was fit on).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "parity/inputs.h"
#include "rung/result.h"

namespace rung {

struct InputSet {
  std::filesystem::path dir;
  std::vector<InputItem> items;
  std::vector<std::string> file_sha256;          // sorted
  std::vector<std::filesystem::path> files;      // in the order of their hashes
  std::string sha256;                            // of the sorted hashes, one per line
};

// Lists the inputs (parity's rules: tensors, subdirectories of tensors, images) and hashes every file they read.
Result<InputSet> read_input_set(const std::filesystem::path& dir);

// kInvalidArgument naming the files both sets hold (by content, whatever their names).
Status check_disjoint(const InputSet& calibration, const InputSet& holdout);

}  // namespace rung
