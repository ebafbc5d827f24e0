// Whether two tensors compute the same thing. One element rule, Tolerance::compare,
// serves every comparison (the probe's faithfulness, bench's output match, parity's
// tensor gate, conform's expected outputs): an element mismatches only where BOTH
// the absolute difference exceeds atol AND the relative difference exceeds rtol. NaN
// on both sides is the same result (unless nan_equal is turned off); a NaN against a
// number, or an infinity the other side does not equal, always mismatches.
#pragma once

#include <string>
#include <vector>

#include "rung/model.h"
#include "rung/tensor.h"

namespace rung {

// How one reference element and one candidate element compare.
struct ElementDifference {
  double abs = 0.0;       // |reference - candidate|: NaN with a NaN, infinite with an unequal infinity
  double rel = 0.0;       // abs / |reference|; a zero reference divides by 1e-30, so only atol can pass it
  bool nan = false;       // a NaN on either side
  bool infinite = false;  // an infinity on either side that the other does not equal
  bool mismatch = false;
  // Whether abs and rel are numbers a statistic can take (no NaN, no unequal infinity).
  bool measured() const { return !nan && !infinite; }
};

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-3;
  // NaN against NaN counts as equal: a model that yields NaN computes the same thing
  // when both sides yield it at the same element (as NumPy's assert_allclose counts
  // it); NaN against a number never does.
  bool nan_equal = true;

  // The element rule, the only place it is written.
  ElementDifference compare(double reference, double candidate) const;
  // The smallest atol that, at this rtol, would have passed `d` (infinite when nothing would);
  // and the smallest rtol that would have, at this atol.
  double atol_to_pass(const ElementDifference& d) const;
  double rtol_to_pass(const ElementDifference& d) const;

  // Bit for bit: the same kernels on the same input.
  static Tolerance exact() { return {0.0, 0.0}; }
  // Reordered f32 arithmetic (another provider's kernels, another thread count): f32 keeps about 7
  // significant digits, and sums reassociated over thousands of terms lose two or three of them.
  static Tolerance close() { return {1e-4, 1e-3}; }
  // An fp16 engine of an f32 model: fp16 keeps about 3 significant digits (a step of 1e-3 near 1),
  // and a few layers compound it, so a few parts in a hundred.
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
  // A quantised (QDQ) form of an f32 model: 8-bit activations round to one of 256 levels, a step of
  // about 0.004 over a range of 1, and a dozen layers compound a few steps. Loose on purpose: whether
  // a quantised form is good enough is decided by parity's decision gates, not by this bound.
  static Tolerance quantised() { return {5e-2, 1e-1}; }
  // Polygraphy's own defaults (its --atol and --rtol), so that a parity run without a gate file
  // reads the way a Polygraphy comparison of the same tensors would.
  static Tolerance polygraphy() { return {1e-5, 1e-5}; }

  // What a rung's outputs are held to when it executes a model of form `model` as form `executed`:
  // `same_form` when the arithmetic is the model's own, approximate() for fp16, quantised() for a
  // quantised form of an f32 model.
  static Tolerance for_forms(NumericForm model, NumericForm executed, const Tolerance& same_form);
};

struct TensorComparison {
  std::string name;
  bool shapes_match = true;
  bool types_match = true;
  std::size_t elements = 0;
  std::size_t mismatches = 0;
  std::size_t nan_mismatches = 0;  // mismatches with a NaN on one side (or both, when nan_equal is off)
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
