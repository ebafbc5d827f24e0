// The proof that a rewritten graph (an opset upgrade, folds) computes what the
// original does: both run side by side by `rung parity` on the same inputs,
// every output through the tensor gate at Tolerance::close(); for folds, which
// round differently, the model's own decision gates may vouch instead.
#pragma once

#include <optional>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "rung/parity.h"
#include "rung/result.h"
#include "rung/tolerance.h"

namespace rung {

struct ProofInputs {
  std::filesystem::path dir;              // or
  std::size_t random = 0;
  std::uint64_t seed = 0;
  std::filesystem::path gate_file;        // preprocessing and input values come from it; its gates do not
  std::filesystem::path preprocess_file;
  // A rewrite that reassociates float arithmetic (folds) may be vouched for by
  // the gate file's own decision gates when a few elements fall past close().
  bool decisions_may_vouch = false;
};

struct ProofSides {
  std::filesystem::path runtime_library;
  std::filesystem::path worker;
  std::chrono::milliseconds deadline{600'000};
};

struct Proof {
  bool proven = false;
  std::string failing_output;  // the first output that differs
  Tolerance tolerance = Tolerance::close();
  ParityReport parity;
  std::optional<ParityReport> decisions;  // the model's gates, when the tensor gate failed and they may vouch
  bool by_decisions() const { return proven && decisions.has_value(); }
};

Result<Proof> prove_same_computation(const std::filesystem::path& original, const std::filesystem::path& rewritten, const ProofInputs& inputs,
                                     const ProofSides& sides, const std::filesystem::path& work_dir);

}  // namespace rung
