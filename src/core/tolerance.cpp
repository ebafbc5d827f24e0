#include "rung/tolerance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rung {

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
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      ++c.mismatches;
      ++c.nan_mismatches;
      continue;
    }
    if (a[i] == b[i]) continue;  // equal infinities too
    double abs = std::fabs(a[i] - b[i]);
    double rel = abs / std::max(std::fabs(a[i]), 1e-30);
    c.max_abs = std::max(c.max_abs, abs);
    c.max_rel = std::max(c.max_rel, rel);
    if (abs > tolerance.atol && rel > tolerance.rtol) ++c.mismatches;
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
