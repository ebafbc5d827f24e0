// What every parity gate shares: reading its parameters, finding its outputs,
// splitting a batched output into items, and formatting numbers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "parity/gates/gate.h"

namespace rung {

void VacuousCount::apply(GateOutcome& g) const {
  g.decision = true;
  g.judged = judged_;
  g.vacuous = vacuous_;
  if (judged_ > 0 && vacuous_ == judged_) {
    g.passed = false;
    g.summary = fmt::format("vacuous: the reference decided nothing on {} of {} inputs; {}", vacuous_, judged_, g.summary);
  }
}

const TensorInfo* find_output(const ModelIo& io, const std::string& name) {
  auto it = std::find_if(io.outputs.begin(), io.outputs.end(), [&](const TensorInfo& t) { return t.name == name; });
  return it == io.outputs.end() ? nullptr : &*it;
}

Status require_output(const ModelIo& io, const std::string& name, const std::string& where) {
  if (const TensorInfo* o = find_output(io, name); o != nullptr) {
    if (o->is_tensor()) return {};
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: output '{}' is {}; decoders read tensors (values are compared "
                                                          "element by element without a gate)", where, name, o->describe())};
  }
  std::vector<std::string> names;
  for (const auto& o : io.outputs) names.push_back("'" + o.name + "'");
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("{}: names output '{}', which the model does not have (its outputs: {})", where, name, fmt::join(names, ", "))};
}

Result<ItemLayout> item_layout(const Tensor& t, std::size_t trailing, const std::string& where) {
  if (t.shape.size() < trailing) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: output '{}' has shape {}; this decoder needs at least {} axes", where, t.name, shape_string(t.shape), trailing)};
  }
  ItemLayout l{1, 1};
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    const auto d = static_cast<std::size_t>(std::max<std::int64_t>(t.shape[i], 0));
    (i + trailing < t.shape.size() ? l.items : l.size) *= d;
  }
  return l;
}

std::string item_name(const std::string& input, std::size_t index, std::size_t items) {
  return items <= 1 ? input : fmt::format("{}#{}", input, index);
}

std::vector<float> to_floats(const Tensor& t) {
  if (t.type == ElementType::kFloat) {
    auto v = t.view<float>();
    return {v.begin(), v.end()};
  }
  auto d = t.to_doubles();
  std::vector<float> out(d.size());
  std::transform(d.begin(), d.end(), out.begin(), [](double x) { return static_cast<float>(x); });
  return out;
}

std::string percent(std::size_t part, std::size_t whole) {
  if (whole == 0) return "-";
  const double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  // Never round a shortfall up to 100%.
  if (part < whole && p > 99.9) return fmt::format("{:.3f}%", std::floor(p * 1000) / 1000);
  return fmt::format("{:.1f}%", std::floor(p * 10) / 10);
}

std::string rate(double fraction) { return fmt::format("{:g}%", fraction * 100); }

std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-3 && a < 1e4) return fmt::format("{:.4g}", v);
  return fmt::format("{:.2e}", v);
}

// Four significant digits, rounded up (then more digits if the text still reads
// below v): a bound printed this way passes when it is used.
std::string num_up(double v) {
  if (!std::isfinite(v) || v <= 0) return num(v);
  const double unit = std::pow(10.0, std::floor(std::log10(v)) - 3);
  for (double up = std::ceil(v / unit) * unit;; up += unit) {
    const std::string text = fmt::format("{:.4g}", up);
    if (std::strtod(text.c_str(), nullptr) >= v) return text;
    if (up > v + 2 * unit) return fmt::format("{:.17g}", v);  // never: four digits always reach v within a unit
  }
}

}  // namespace rung

namespace rung {

std::string changes_phrase(std::size_t lost, std::size_t gained) {
  const std::size_t n = lost + gained;
  if (n == 0) return "no decisions changed";
  const std::string head = fmt::format("{} decision{} changed", n, n == 1 ? "" : "s");
  if (lost == gained) return fmt::format("{} ({} each way)", head, lost);
  return fmt::format("{} ({} lost, {} gained)", head, lost, gained);
}

}  // namespace rung
