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
  // NaN against NaN counts as equal (as NumPy's assert_allclose, which ONNX's
  // expected outputs are checked with, counts it); NaN against a number never does.
  bool nan_equal = false;

  static Tolerance exact() { return {0.0, 0.0}; }
  // Reordered f32 arithmetic (another provider's kernels, another thread count).
  static Tolerance close() { return {1e-4, 1e-3}; }
  // fp16 engines and similar precision changes.
  static Tolerance approximate() { return {1e-2, 5e-2}; }
  // ONNX's own bounds for its backend tests' expected outputs (onnx/backend/test/runner).
  static Tolerance onnx_backend() { return {1e-7, 1e-3, true}; }
  // What a narrow float type itself can hold: two units in the last place of its
  // mantissa, relative (float16 keeps 11 significant bits, bfloat16 8, float8 4 or 3).
  static Tolerance float16() { return {1e-3, 2.0 / 1024}; }
  static Tolerance bfloat16() { return {1e-2, 2.0 / 128}; }
  static Tolerance float8() { return {1e-1, 2.0 / 4}; }
  // This tolerance, loosened to the precision `type` holds (never tightened):
  // float16 outputs are compared at float16's bounds at least.
  Tolerance for_type(ElementType type) const;
};

struct TensorComparison {
  std::string name;
  bool shapes_match = true;
  bool types_match = true;
  std::size_t elements = 0;
  std::size_t mismatches = 0;
  std::size_t nan_mismatches = 0;  // NaN on one side (or both, unless the tolerance counts NaN equal)
  std::string first_string_difference;  // strings: "at 3: 'a' vs 'b'"
  std::string difference;               // when types or shapes differ: "float32 [2, 3] against int64 [2, 3]"
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

// Values compare tensor by tensor: a sequence's elements in order (named
// "out[2]"), an optional's held value. A different structure (another length,
// None on one side only, a sequence against a tensor) is a mismatch of its own.
struct ValueComparison {
  std::vector<TensorComparison> tensors;
  std::string structure;  // the first structural difference; empty when both values have the same structure
  bool faithful() const;
  std::string first_problem() const;  // empty when faithful
};

ValueComparison compare_values(const Value& reference, const Value& candidate, const Tolerance& tolerance);

}  // namespace rung
