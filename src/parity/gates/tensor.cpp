// The tensor gate: Polygraphy's per-element rule (Tolerance::compare: a mismatch
// only where the absolute difference exceeds atol AND the relative one exceeds
// rtol; NaN against NaN agrees, NaN against a number mismatches), with the
// error distribution, NaN and Inf counts,
// the smallest tolerances that would have passed, and a pass rate over inputs in
// place of all-or-nothing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "parity/gates/gate.h"
#include "rung/json_text.h"
#include "rung/tolerance.h"

namespace rung {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Errors over every input without keeping them: log-spaced bins, 50 a decade,
// so a median or p99 is known to within 5%: reported as the bin's geometric
// centre, clamped to the smallest and largest error seen.
class ErrorHistogram {
 public:
  void add(double v) {
    ++count_;
    if (v <= 0) {
      ++zeros_;
      return;
    }
    low_ = std::min(low_, v);
    high_ = std::max(high_, v);
    const double pos = (std::log10(v) - kMinExp) * kPerDecade;
    const auto bin = static_cast<std::size_t>(std::clamp(std::floor(pos) + 1, 0.0, static_cast<double>(bins_.size() - 1)));
    ++bins_[bin];
  }
  double quantile(double q) const {
    if (count_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
    std::uint64_t seen = zeros_;
    if (seen >= rank) return 0;
    for (std::size_t b = 0; b < bins_.size(); ++b) {
      seen += bins_[b];
      if (seen >= rank) return std::clamp(std::pow(10.0, kMinExp + (static_cast<double>(b) - 0.5) / kPerDecade), low_, high_);
    }
    return high_;
  }

 private:
  static constexpr int kPerDecade = 50, kMinExp = -12, kMaxExp = 8;
  std::vector<std::uint64_t> bins_ = std::vector<std::uint64_t>((kMaxExp - kMinExp) * kPerDecade + 2, 0);
  std::uint64_t count_ = 0, zeros_ = 0;
  double low_ = kInf, high_ = 0;
};

struct OutputStats {
  std::size_t inputs = 0, passed = 0, shape_mismatch = 0;
  std::size_t elements = 0, mismatches = 0, nan_ref = 0, nan_cand = 0, inf_ref = 0, inf_cand = 0;
  std::size_t finite = 0;
  double max_abs = 0, max_rel = 0, sum_abs = 0, sum_rel = 0;
  double need_atol = 0, need_rtol = 0;  // over every input
  ErrorHistogram abs_hist, rel_hist;
  std::vector<std::string> failing;     // the first few failing inputs
};

class TensorGate final : public ParityGate {
 public:
  TensorGate(std::vector<std::string> outputs, const Tolerance& tolerance, double pass_rate)
      : names_(std::move(outputs)), tolerance_(tolerance), pass_rate_(pass_rate), stats_(names_.size()) {}

  std::vector<std::string> outputs() const override { return names_; }

  Status check(const ModelIo& io) override {
    if (names_.empty()) {  // every tensor output; sequences and optional values are compared apart
      for (const auto& o : io.outputs) {
        if (o.is_tensor()) names_.push_back(o.name);
      }
      stats_.resize(names_.size());
    }
    for (const auto& n : names_) {
      RUNG_RETURN_IF_ERROR(require_output(io, n, "tensor gate"));
    }
    return {};
  }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    double input_atol = 0, input_rtol = 0;
    bool input_ok = true;
    for (std::size_t k = 0; k < names_.size(); ++k) {
      const Tensor& a = *ref.at(names_[k]);
      const Tensor& b = *cand.at(names_[k]);
      OutputStats& s = stats_[k];
      ++s.inputs;
      double need_atol = 0, need_rtol = 0;
      bool ok = compare(a, b, s, need_atol, need_rtol);
      s.need_atol = std::max(s.need_atol, need_atol);
      s.need_rtol = std::max(s.need_rtol, need_rtol);
      input_atol = std::max(input_atol, need_atol);
      input_rtol = std::max(input_rtol, need_rtol);
      if (ok) {
        ++s.passed;
      } else {
        input_ok = false;
        if (s.failing.size() < 5) s.failing.push_back(input);
      }
    }
    ++inputs_;
    passed_ += input_ok;
    need_atol_.push_back(input_atol);
    need_rtol_.push_back(input_rtol);
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "tensor";
    g.title = names_.size() == 1 ? fmt::format("tensor · {}", names_[0]) : fmt::format("tensor · {} outputs", names_.size());
    const auto needed = static_cast<std::size_t>(std::ceil(pass_rate_ * static_cast<double>(inputs_) - 1e-9));
    g.passed = inputs_ > 0 && passed_ >= needed;
    g.summary = fmt::format("{} of {} inputs within atol {} AND rtol {} on every output ({}; need {})", passed_, inputs_, num(tolerance_.atol),
                            num(tolerance_.rtol), percent(passed_, inputs_), pass_rate_ >= 1 ? std::string("all") : rate(pass_rate_));
    // The smallest single tolerance that would have passed the same pass rate.
    auto kth = [&](std::vector<double> v) {
      if (v.empty() || needed == 0) return 0.0;
      std::sort(v.begin(), v.end());
      return v[std::min(needed, v.size()) - 1];
    };
    const double pass_atol = kth(need_atol_), pass_rtol = kth(need_rtol_);
    g.details.push_back(would_pass(pass_atol, pass_rtol));
    nlohmann::json outs = nlohmann::json::array();
    for (std::size_t k = 0; k < names_.size(); ++k) {
      const OutputStats& s = stats_[k];
      const double mean_abs = s.finite ? s.sum_abs / static_cast<double>(s.finite) : 0;
      const double mean_rel = s.finite ? s.sum_rel / static_cast<double>(s.finite) : 0;
      g.details.push_back(fmt::format("'{}': {} of {} inputs pass, {} of {} elements mismatch{}", names_[k], s.passed, s.inputs,
                                      s.mismatches, s.elements, s.shape_mismatch ? fmt::format(", {} inputs with differing shapes", s.shape_mismatch) : ""));
      g.details.push_back(fmt::format("  abs error max {} mean {} median ≈{} p99 ≈{}", num(s.max_abs), num(mean_abs),
                                      num(s.abs_hist.quantile(0.5)), num(s.abs_hist.quantile(0.99))));
      g.details.push_back(fmt::format("  rel error max {} mean {} median ≈{} p99 ≈{}", num(s.max_rel), num(mean_rel),
                                      num(s.rel_hist.quantile(0.5)), num(s.rel_hist.quantile(0.99))));
      g.details.push_back(fmt::format("  NaN {} ref / {} cand, Inf {} ref / {} cand; {}", s.nan_ref, s.nan_cand, s.inf_ref, s.inf_cand,
                                      every_input_passes(s.need_atol, s.need_rtol)));
      if (!s.failing.empty()) g.details.push_back(fmt::format("  failing inputs: {}{}", fmt::join(s.failing, ", "), s.inputs - s.passed > s.failing.size() ? ", ..." : ""));
      auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
      outs.push_back({{"output", names_[k]},
                      {"inputs", s.inputs},
                      {"inputs_passed", s.passed},
                      {"shape_mismatches", s.shape_mismatch},
                      {"elements", s.elements},
                      {"mismatches", s.mismatches},
                      {"nan", {{"ref", s.nan_ref}, {"cand", s.nan_cand}}},
                      {"inf", {{"ref", s.inf_ref}, {"cand", s.inf_cand}}},
                      {"abs", {{"max", s.max_abs}, {"mean", mean_abs}, {"median", s.abs_hist.quantile(0.5)}, {"p99", s.abs_hist.quantile(0.99)}}},
                      {"rel", {{"max", finite_or_null(s.max_rel)}, {"mean", finite_or_null(mean_rel)}, {"median", finite_or_null(s.rel_hist.quantile(0.5))}, {"p99", finite_or_null(s.rel_hist.quantile(0.99))}}},
                      {"min_passing_atol", finite_or_null(s.need_atol)},
                      {"min_passing_rtol", finite_or_null(s.need_rtol)}});
    }
    auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json j = {{"atol", tolerance_.atol}, {"rtol", tolerance_.rtol}, {"pass_rate", pass_rate_}, {"inputs", inputs_}, {"inputs_passed", passed_},
                        {"passing_atol", finite_or_null(pass_atol)}, {"passing_rtol", finite_or_null(pass_rtol)}, {"outputs", outs}};
    g.stats_json = json_text(j);
    return g;
  }

 private:
  // The figures are rounded up, never below the true minimum: the printed one passes when used.
  std::string would_pass(double atol, double rtol) const {
    if (!std::isfinite(atol) && !std::isfinite(rtol)) {
      return "no atol or rtol would pass: an element is NaN on one side only, an infinity differs, or a shape differs";
    }
    return fmt::format("would pass at atol {} (rtol {}) or at rtol {} (atol {})", bound_up(atol), num(tolerance_.rtol), bound_up(rtol),
                       num(tolerance_.atol));
  }
  static std::string every_input_passes(double atol, double rtol) {
    if (!std::isfinite(atol) && !std::isfinite(rtol)) return "no atol or rtol passes every input";
    return fmt::format("every input passes at atol {} or rtol {}", bound_up(atol), bound_up(rtol));
  }
  static std::string bound_up(double v) { return std::isfinite(v) ? num_up(v) : "(none)"; }

  bool compare(const Tensor& a, const Tensor& b, OutputStats& s, double& need_atol, double& need_rtol) const {
    if (a.type != b.type || a.shape != b.shape) {
      ++s.shape_mismatch;
      need_atol = need_rtol = kInf;
      return false;
    }
    if (a.type == ElementType::kString) {  // strings compare exactly: no tolerance makes two differ less
      std::size_t differ = 0;
      for (std::size_t i = 0; i < a.strings.size() && i < b.strings.size(); ++i) differ += a.strings[i] != b.strings[i];
      s.elements += a.strings.size();
      s.mismatches += differ;
      if (differ > 0) need_atol = need_rtol = kInf;
      return differ == 0;
    }
    // A narrow float type is held to its own precision at least (Tolerance::float16(), bfloat16()).
    const Tolerance bounds = tolerance_.for_type(a.type);
    const auto x = a.to_doubles(), y = b.to_doubles();
    s.elements += x.size();
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      const double p = x[i], q = y[i];
      s.nan_ref += std::isnan(p);
      s.nan_cand += std::isnan(q);
      s.inf_ref += std::isinf(p);
      s.inf_cand += std::isinf(q);
      const ElementDifference d = bounds.compare(p, q);
      mismatches += d.mismatch;
      need_atol = std::max(need_atol, bounds.atol_to_pass(d));
      need_rtol = std::max(need_rtol, bounds.rtol_to_pass(d));
      if (!d.measured()) continue;  // NaN and infinities are counted above, not averaged
      ++s.finite;
      s.sum_abs += d.abs;
      s.sum_rel += d.rel;
      s.max_abs = std::max(s.max_abs, d.abs);
      s.max_rel = std::max(s.max_rel, d.rel);
      s.abs_hist.add(d.abs);
      s.rel_hist.add(d.rel);
    }
    s.mismatches += mismatches;
    return mismatches == 0;
  }

  std::vector<std::string> names_;
  Tolerance tolerance_;
  double pass_rate_;
  std::vector<OutputStats> stats_;
  std::size_t inputs_ = 0, passed_ = 0;
  std::vector<double> need_atol_, need_rtol_;  // per input, over its outputs
};

}  // namespace

Result<std::unique_ptr<ParityGate>> make_tensor_gate(GateParams& p) {
  auto outputs = p.texts("outputs");
  const Tolerance tolerance{p.number("atol", Tolerance::polygraphy().atol), p.number("rtol", Tolerance::polygraphy().rtol)};
  const double rate = p.number("pass_rate", 1.0);
  p.require(tolerance.atol >= 0 && tolerance.rtol >= 0, "atol and rtol must not be negative");
  p.require(rate > 0 && rate <= 1, "pass_rate must be in (0, 1]");
  RUNG_RETURN_IF_ERROR(p.finish());
  return std::unique_ptr<ParityGate>(std::make_unique<TensorGate>(std::move(outputs), tolerance, rate));
}

}  // namespace rung
