// Whether two tensors compute the same thing, with named tolerances.
// An element mismatches only where BOTH the absolute difference exceeds atol
// AND the relative difference exceeds rtol (NaN against anything mismatches).
#pragma once

#include <string>
#include <vector>

#include "rung/tensor.h"

namespace rung {

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-3;

  static Tolerance exact() { return {0.0, 0.0}; }
  // Reordered f32 arithmetic (another provider's kernels, another thread count).
  static Tolerance close() { return {1e-4, 1e-3}; }
  // fp16 engines and similar precision changes.
  static Tolerance approximate() { return {1e-2, 5e-2}; }
};

struct TensorComparison {
  std::string name;
  bool shapes_match = true;
  bool types_match = true;
  std::size_t elements = 0;
  std::size_t mismatches = 0;
  std::size_t nan_mismatches = 0;  // NaN on one side (or both)
  double max_abs = 0.0;
  double max_rel = 0.0;
  bool faithful() const { return shapes_match && types_match && mismatches == 0; }
  std::string describe() const;  // "output 'y': 12 of 4096 elements differ (max abs 0.5, max rel 0.31)"
};

TensorComparison compare_tensors(const Tensor& reference, const Tensor& candidate, const Tolerance& tolerance);

// Compares outputs pairwise by name; a missing output is a mismatch.
struct OutputsComparison {
  std::vector<TensorComparison> outputs;
  std::vector<std::string> missing;  // names in the reference the candidate lacks
  bool faithful() const;
  std::string first_problem() const;  // empty when faithful
};

OutputsComparison compare_outputs(const std::vector<Tensor>& reference, const std::vector<Tensor>& candidate,
                                  const Tolerance& tolerance);

}  // namespace rung
