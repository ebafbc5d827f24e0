#include "rung/tolerance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace rung {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Divides the difference when the reference is zero: any difference is then relatively huge.
constexpr double kTinyReference = 1e-30;

bool is_quantised(NumericForm f) { return f == NumericForm::kInt8 || f == NumericForm::kA16W8 || f == NumericForm::kA16W16; }

}  // namespace

ElementDifference Tolerance::compare(double reference, double candidate) const {
  ElementDifference d;
  if (std::isnan(reference) || std::isnan(candidate)) {  // NaN agrees with nothing, itself included
    d.nan = true;
    d.abs = d.rel = std::numeric_limits<double>::quiet_NaN();
    d.mismatch = true;
    return d;
  }
  if (reference == candidate) return d;  // equal infinities too
  if (std::isinf(reference) || std::isinf(candidate)) {
    d.infinite = true;
    d.abs = d.rel = kInf;
    d.mismatch = true;
    return d;
  }
  d.abs = std::fabs(reference - candidate);
  d.rel = d.abs / std::max(std::fabs(reference), kTinyReference);
  d.mismatch = d.abs > atol && d.rel > rtol;
  return d;
}

// An element passes once either bound covers it, so a looser atol helps only where rel exceeds rtol.
double Tolerance::atol_to_pass(const ElementDifference& d) const {
  if (!d.measured()) return d.mismatch ? kInf : 0.0;
  return d.rel > rtol ? d.abs : 0.0;
}

double Tolerance::rtol_to_pass(const ElementDifference& d) const {
  if (!d.measured()) return d.mismatch ? kInf : 0.0;
  return d.abs > atol ? d.rel : 0.0;
}

Tolerance Tolerance::for_forms(NumericForm model, NumericForm executed, const Tolerance& same_form) {
  if (executed == model) return same_form;
  if (executed == NumericForm::kF16 && model == NumericForm::kF32) return approximate();
  if (is_quantised(executed) && !is_quantised(model)) return quantised();
  return same_form;
}

std::string TensorComparison::describe() const {
  if (!types_match) return fmt::format("output '{}': element types differ", name);
  if (!shapes_match) return fmt::format("output '{}': shapes differ", name);
  return fmt::format("output '{}': {} of {} elements differ{} (max abs {:.3g}, max rel {:.3g})", name, mismatches, elements,
                     nan_mismatches ? fmt::format(", {} with NaN", nan_mismatches) : "", max_abs, max_rel);
}

TensorComparison compare_tensors(const Tensor& reference, const Tensor& candidate, const Tolerance& tolerance) {
  TensorComparison c;
  c.name = reference.name;
  c.types_match = reference.type == candidate.type;
  c.shapes_match = reference.shape == candidate.shape;
  if (!c.types_match || !c.shapes_match) return c;
  auto a = reference.to_doubles(), b = candidate.to_doubles();
  c.elements = a.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const ElementDifference d = tolerance.compare(a[i], b[i]);
    if (d.mismatch) {
      ++c.mismatches;
      c.nan_mismatches += d.nan;
    }
    if (d.nan) continue;  // a NaN has no size to report
    c.max_abs = std::max(c.max_abs, d.abs);
    c.max_rel = std::max(c.max_rel, d.rel);
  }
  return c;
}

bool OutputsComparison::faithful() const {
  return missing.empty() && std::all_of(outputs.begin(), outputs.end(), [](const auto& o) { return o.faithful(); });
}

std::string OutputsComparison::first_problem() const {
  if (!missing.empty()) return fmt::format("output '{}' missing", missing.front());
  for (const auto& o : outputs) {
    if (!o.faithful()) return o.describe();
  }
  return {};
}

OutputsComparison compare_outputs(const std::vector<Tensor>& reference, const std::vector<Tensor>& candidate,
                                  const Tolerance& tolerance) {
  OutputsComparison out;
  for (const auto& r : reference) {
    auto it = std::find_if(candidate.begin(), candidate.end(), [&](const Tensor& t) { return t.name == r.name; });
    if (it == candidate.end()) {
      out.missing.push_back(r.name);
    } else {
      out.outputs.push_back(compare_tensors(r, *it, tolerance));
    }
  }
  return out;
}

}  // namespace rung
