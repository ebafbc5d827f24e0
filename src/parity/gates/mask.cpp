// The mask gate: each mask binarised on both sides (by threshold, or by the
// argmax over classes), compared by IoU; gated on the fraction at or above a floor.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parity/gates/gate.h"
#include "rung/json_text.h"
#include "rung/decode.h"

namespace rung {
namespace {

class MaskGate final : public ParityGate {
 public:
  std::string output, mode = "threshold";
  Activation activation = Activation::kNone;
  double threshold = 0.5, min_iou = 0.9, min_fraction = 1.0;

  std::vector<std::string> outputs() const override { return {output}; }
  Status check(const ModelIo& io) override { return require_output(io, output, "mask gate"); }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    const Tensor& a = *ref.at(output);
    const Tensor& b = *cand.at(output);
    const bool argmax = mode == "argmax";
    auto l = item_layout(a, argmax ? 3 : 2, "mask gate");
    if (!l) return l.error();
    if (a.shape != b.shape) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("mask gate: '{}' for {} is {} in the reference, {} in the candidate", output,
                                                            input, shape_string(a.shape), shape_string(b.shape))};
    }
    const auto x = a.to_doubles(), y = b.to_doubles();
    const auto plane = static_cast<std::size_t>(a.shape[a.shape.size() - 2] * a.shape.back());
    const std::size_t classes = argmax ? l->size / std::max<std::size_t>(plane, 1) : 1;
    std::vector<std::uint8_t> ma(plane), mb(plane);
    for (std::size_t item = 0; item < l->items; ++item) {
      const std::size_t base = item * l->size;
      bool decided = false;  // the reference marked some pixel (argmax: some pixel of a class other than the first, the background)
      for (std::size_t c = 0; c < classes; ++c) {
        for (std::size_t i = 0; i < plane; ++i) {
          if (argmax) {
            ma[i] = winner(x, base, i, plane, classes) == c ? 1 : 0;
            mb[i] = winner(y, base, i, plane, classes) == c ? 1 : 0;
          } else {
            ma[i] = on(x[base + i]) ? 1 : 0;
            mb[i] = on(y[base + i]) ? 1 : 0;
          }
        }
        const auto na = static_cast<std::size_t>(std::count(ma.begin(), ma.end(), 1));
        decided = decided || (na > 0 && (!argmax || c > 0));
        const auto nb = static_cast<std::size_t>(std::count(mb.begin(), mb.end(), 1));
        if (na == 0 && nb == 0) {
          ++empty_;
          continue;
        }
        const double iou = mask_iou(ma, mb);
        ious_.push_back(iou);
        pixels_ref_ += na;
        pixels_cand_ += nb;
        if (iou < min_iou && examples_.size() < 10) {
          examples_.push_back(fmt::format("{}{}: IoU {} ({} vs {} pixels)", item_name(input, item, l->items),
                                          argmax ? fmt::format(" class {}", c) : "", num(iou), na, nb));
        }
      }
      vacuous_.add(decided);
    }
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "mask";
    g.title = fmt::format("mask · {}", output);
    const std::size_t n = ious_.size();
    const auto above = static_cast<std::size_t>(std::count_if(ious_.begin(), ious_.end(), [&](double v) { return v >= min_iou; }));
    double sum = 0, low = 1;
    for (double v : ious_) sum += v, low = std::min(low, v);
    g.passed = n + empty_ > 0 && static_cast<double>(above) >= min_fraction * static_cast<double>(n) - 1e-9;
    g.summary = fmt::format("{} masks ({} empty on both sides, not counted), {} below IoU {}; {} at or above ({}, need {:g}%), mean {}, "
                            "min {}; {} vs {} pixels on", n, empty_, n - above, num(min_iou), above, percent(above, n), min_fraction * 100,
                            num(n ? sum / static_cast<double>(n) : 1.0), num(n ? low : 1.0), pixels_ref_, pixels_cand_);
    g.details = examples_;
    if (n - above > examples_.size()) g.details.push_back(fmt::format("... and {} more", n - above - examples_.size()));
    g.stats_json = json_text(nlohmann::json{{"masks", n}, {"empty_both", empty_}, {"at_or_above", above}, {"min_iou", min_iou},
                                  {"mean_iou", n ? sum / static_cast<double>(n) : 1.0}, {"lowest_iou", n ? low : 1.0},
                                  {"pixels_ref", pixels_ref_}, {"pixels_cand", pixels_cand_}});
    vacuous_.apply(g);
    return g;
  }

 private:
  VacuousCount vacuous_;
  bool on(double v) const {
    if (activation == Activation::kSigmoid) v = 1.0 / (1.0 + std::exp(-v));
    return v >= threshold;
  }
  static std::size_t winner(const std::vector<double>& v, std::size_t base, std::size_t i, std::size_t plane, std::size_t classes) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < classes; ++c) {
      if (v[base + c * plane + i] > v[base + best * plane + i]) best = c;
    }
    return best;
  }

  std::vector<double> ious_;
  std::size_t empty_ = 0, pixels_ref_ = 0, pixels_cand_ = 0;
  std::vector<std::string> examples_;
};

}  // namespace

Result<std::unique_ptr<ParityGate>> make_mask_gate(GateParams& p) {
  auto g = std::make_unique<MaskGate>();
  g->output = p.text("output", "");
  g->mode = p.text("mode", "threshold");
  auto act = activation_from_name(p.text("activation", "none"));
  p.require(act.ok() && (!act || *act != Activation::kSoftmax), "'activation' for masks is none or sigmoid");
  if (act) g->activation = *act;
  g->threshold = p.number("threshold", 0.5);
  g->min_iou = p.number("min_iou", 0.9);
  g->min_fraction = p.number("min_fraction", 1.0);
  p.require(!g->output.empty(), "needs 'output', the mask output");
  p.require(g->mode == "threshold" || g->mode == "argmax", "'mode' is threshold (one mask per [H, W] plane) or argmax (over the class axis)");
  p.require(g->min_iou >= 0 && g->min_iou <= 1 && g->min_fraction > 0 && g->min_fraction <= 1, "min_iou in [0, 1], min_fraction in (0, 1]");
  RUNG_RETURN_IF_ERROR(p.finish());
  return std::unique_ptr<ParityGate>(std::move(g));
}

}  // namespace rung
