#include "rung/tolerance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace rung {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Divides the difference when the reference is zero: any difference is then relatively huge.
constexpr double kTinyReference = 1e-30;

bool is_quantised(NumericForm f) { return f != NumericForm::kF32 && f != NumericForm::kF16; }

}  // namespace

ElementDifference Tolerance::compare(double reference, double candidate) const {
  ElementDifference d;
  if (nan_equal && std::isnan(reference) && std::isnan(candidate)) {  // NaN where the reference has NaN: the same result
    d.nan = true;
    d.abs = d.rel = std::numeric_limits<double>::quiet_NaN();
    return d;
  }
  if (std::isnan(reference) || std::isnan(candidate)) {  // NaN against a number: no tolerance covers it
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

Tolerance Tolerance::for_type(ElementType type) const {
  Tolerance floor;
  switch (type) {
    case ElementType::kFloat16: floor = float16(); break;
    case ElementType::kBFloat16: floor = bfloat16(); break;
    case ElementType::kFloat8E4M3FN: case ElementType::kFloat8E4M3FNUZ: case ElementType::kFloat8E5M2:
    case ElementType::kFloat8E5M2FNUZ: floor = float8(); break;
    default: return *this;
  }
  return {std::max(atol, floor.atol), std::max(rtol, floor.rtol), nan_equal};
}

std::string TensorComparison::describe() const {
  if (!types_match) return fmt::format("output '{}': element types differ: {}", name, difference);
  if (!shapes_match) return fmt::format("output '{}': shapes differ: {}", name, difference);
  if (!first_string_difference.empty()) {
    return fmt::format("output '{}': {} of {} strings differ (first {})", name, mismatches, elements, first_string_difference);
  }
  return fmt::format("output '{}': {} of {} elements differ{} (max abs {:.3g}, max rel {:.3g})", name, mismatches, elements,
                     nan_mismatches ? fmt::format(", {} with NaN", nan_mismatches) : "", max_abs, max_rel);
}

TensorComparison compare_tensors(const Tensor& reference, const Tensor& candidate, const Tolerance& tolerance) {
  TensorComparison c;
  c.name = reference.name;
  c.types_match = reference.type == candidate.type;
  c.shapes_match = reference.shape == candidate.shape;
  if (!c.types_match || !c.shapes_match) {
    c.difference = fmt::format("{} {} against {} {}", element_type_name(reference.type), shape_string(reference.shape),
                               element_type_name(candidate.type), shape_string(candidate.shape));
    return c;
  }
  if (reference.type == ElementType::kString) {  // strings compare exactly
    c.elements = reference.strings.size();
    for (std::size_t i = 0; i < c.elements && i < candidate.strings.size(); ++i) {
      if (reference.strings[i] == candidate.strings[i]) continue;
      if (c.mismatches++ == 0) c.first_string_difference = fmt::format("at {}: '{}' vs '{}'", i, reference.strings[i], candidate.strings[i]);
    }
    return c;
  }
  const Tolerance bounds = tolerance.for_type(reference.type);
  auto a = reference.to_doubles(), b = candidate.to_doubles();
  c.elements = a.size();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const ElementDifference d = bounds.compare(a[i], b[i]);
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
  // By name through an index, so a model with many outputs costs in proportion to them.
  std::unordered_map<std::string_view, const Tensor*> by_name;
  by_name.reserve(candidate.size());
  for (const auto& t : candidate) by_name.emplace(t.name, &t);  // the first of a repeated name, as before
  for (const auto& r : reference) {
    auto it = by_name.find(r.name);
    if (it == by_name.end()) {
      out.missing.push_back(r.name);
    } else {
      out.outputs.push_back(compare_tensors(r, *it->second, tolerance));
    }
  }
  return out;
}

namespace {

const char* kind_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kTensor: return "a tensor";
    case Value::Kind::kSequence: return "a sequence";
    case Value::Kind::kOptional: return v.items.empty() ? "None" : "an optional value";
  }
  return "?";
}

void compare_into(const Value& a, const Value& b, const std::string& name, const Tolerance& tolerance, ValueComparison& out) {
  if (!out.structure.empty()) return;
  if (a.kind != b.kind) {
    out.structure = fmt::format("output '{}': {} against {}", name, kind_name(a), kind_name(b));
    return;
  }
  switch (a.kind) {
    case Value::Kind::kTensor: {
      Tensor reference = a.tensor;
      reference.name = name;
      out.tensors.push_back(compare_tensors(reference, b.tensor, tolerance));
      return;
    }
    case Value::Kind::kSequence:
      if (a.items.size() != b.items.size()) {
        out.structure = fmt::format("output '{}': a sequence of {} against one of {}", name, a.items.size(), b.items.size());
        return;
      }
      for (std::size_t i = 0; i < a.items.size(); ++i) compare_into(a.items[i], b.items[i], fmt::format("{}[{}]", name, i), tolerance, out);
      return;
    case Value::Kind::kOptional:
      if (a.items.size() != b.items.size()) {
        out.structure = fmt::format("output '{}': {} against {}", name, kind_name(a), kind_name(b));
        return;
      }
      if (!a.items.empty()) compare_into(a.items.front(), b.items.front(), name, tolerance, out);
      return;
  }
}

}  // namespace

bool ValueComparison::faithful() const {
  return structure.empty() && std::all_of(tensors.begin(), tensors.end(), [](const auto& t) { return t.faithful(); });
}

std::string ValueComparison::first_problem() const {
  if (!structure.empty()) return structure;
  for (const auto& t : tensors) {
    if (!t.faithful()) return t.describe();
  }
  return {};
}

ValueComparison compare_values(const Value& reference, const Value& candidate, const Tolerance& tolerance) {
  ValueComparison out;
  compare_into(reference, candidate, reference.name, tolerance, out);
  return out;
}

}  // namespace rung
