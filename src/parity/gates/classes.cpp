// Decision gates over class scores: classification (top-1, top-k, threshold
// flips) and fixed-slot detection (DETR-style, compared query by query).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parity/gates/gate.h"
#include "rung/json_text.h"
#include "rung/decode.h"

namespace rung {
namespace {

constexpr std::size_t kExamples = 10;  // differing items named in the report

class ClassificationGate final : public ParityGate {
 public:
  std::string output;
  Activation activation = Activation::kSoftmax;
  std::size_t k = 5;
  double threshold = NAN;  // NaN: no threshold decision
  double min_top1 = 1, min_topk = 1;
  double max_flips = 0;

  std::vector<std::string> outputs() const override { return {output}; }
  Status check(const ModelIo& io) override { return require_output(io, output, "classification gate"); }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    const Tensor& a = *ref.at(output);
    const Tensor& b = *cand.at(output);
    auto la = item_layout(a, 1, "classification gate");
    if (!la) return la.error();
    if (a.shape != b.shape) {
      ++shape_changes_;
      examples(fmt::format("{}: shape {} vs {}", input, shape_string(a.shape), shape_string(b.shape)));
      return {};
    }
    const auto x = a.to_doubles(), y = b.to_doubles();
    const std::size_t c = la->size;
    for (std::size_t i = 0; i < la->items; ++i) {
      const auto p = activate(std::span<const double>(x).subspan(i * c, c), activation);
      const auto q = activate(std::span<const double>(y).subspan(i * c, c), activation);
      ++items_;
      const auto tp = top_k(p, k), tq = top_k(q, k);
      const std::string name = item_name(input, i, la->items);
      if (!tp.empty() && !tq.empty() && tp[0] == tq[0]) {
        ++top1_same_;
      } else if (!tp.empty() && !tq.empty()) {
        examples(fmt::format("{}: top-1 class {} ({}) became {} ({})", name, tp[0], num(p[tp[0]]), tq[0], num(q[tq[0]])));
      }
      auto sp = tp, sq = tq;
      std::sort(sp.begin(), sp.end());
      std::sort(sq.begin(), sq.end());
      topk_same_ += sp == sq;
      if (std::isnan(threshold)) continue;
      vacuous_.add(std::any_of(p.begin(), p.end(), [&](double v) { return v >= threshold; }));
      for (std::size_t j = 0; j < c; ++j) {
        const bool on_ref = p[j] >= threshold, on_cand = q[j] >= threshold;
        above_ref_ += on_ref;
        above_cand_ += on_cand;
        if (on_ref != on_cand) {
          (on_ref ? lost_ : gained_) += 1;
          examples(fmt::format("{}: class {} {} at {} ({} vs {})", name, j, on_ref ? "dropped below" : "rose above", num(threshold),
                               num(p[j]), num(q[j])));
        }
      }
    }
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "classification";
    g.title = fmt::format("classification · {}", output);
    const double n = static_cast<double>(items_);
    const bool top1_ok = items_ > 0 && static_cast<double>(top1_same_) >= min_top1 * n - 1e-9;
    const bool topk_ok = items_ > 0 && static_cast<double>(topk_same_) >= min_topk * n - 1e-9;
    const bool flips_ok = static_cast<double>(lost_ + gained_) <= max_flips;
    g.passed = top1_ok && topk_ok && flips_ok && shape_changes_ == 0;
    g.summary = fmt::format("{} vs {} items; top-1 changed on {} ({} agree, need {}); top-{} set changed on {} ({} agree, need {})",
                            items_, items_, items_ - top1_same_, percent(top1_same_, items_), rate(min_top1), k, items_ - topk_same_,
                            percent(topk_same_, items_), rate(min_topk));
    if (!std::isnan(threshold)) {
      g.summary += fmt::format("; at threshold {}: {} vs {} above, {}", num(threshold), above_ref_, above_cand_, changes_phrase(lost_, gained_));
    }
    if (shape_changes_) g.details.push_back(fmt::format("{} inputs gave outputs of different shapes", shape_changes_));
    g.details.insert(g.details.end(), examples_.begin(), examples_.end());
    if (example_count_ > examples_.size()) g.details.push_back(fmt::format("... and {} more", example_count_ - examples_.size()));
    g.stats_json = json_text(nlohmann::json{{"items", items_}, {"top1_agree", top1_same_}, {"topk_agree", topk_same_}, {"k", k},
                                  {"threshold", std::isnan(threshold) ? nlohmann::json(nullptr) : nlohmann::json(threshold)},
                                  {"above_ref", above_ref_}, {"above_cand", above_cand_}, {"lost", lost_}, {"gained", gained_},
                                  {"shape_changes", shape_changes_}});
    vacuous_.apply(g);
    return g;
  }

 private:
  void examples(std::string line) {
    ++example_count_;
    if (examples_.size() < kExamples) examples_.push_back(std::move(line));
  }
  std::size_t items_ = 0, top1_same_ = 0, topk_same_ = 0, above_ref_ = 0, above_cand_ = 0, lost_ = 0, gained_ = 0;
  std::size_t shape_changes_ = 0, example_count_ = 0;
  std::vector<std::string> examples_;
  VacuousCount vacuous_;
};

// One query per slot, the same slot meaning the same query on both sides.
class SlotsGate final : public ParityGate {
 public:
  std::string scores, boxes;
  Activation activation = Activation::kSigmoid;
  double threshold = 0.5;
  double min_box_iou = 0;   // 0: box positions are not a decision
  std::string box_format = "cxcywh";
  double max_changed = 0;

  std::vector<std::string> outputs() const override {
    return boxes.empty() ? std::vector<std::string>{scores} : std::vector<std::string>{scores, boxes};
  }
  Status check(const ModelIo& io) override {
    RUNG_RETURN_IF_ERROR(require_output(io, scores, "slots gate"));
    return boxes.empty() ? Status{} : require_output(io, boxes, "slots gate");
  }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    const Tensor& a = *ref.at(scores);
    const Tensor& b = *cand.at(scores);
    auto la = item_layout(a, 2, "slots gate");
    if (!la) return la.error();
    if (a.shape != b.shape) {
      ++shape_changes_;
      example(fmt::format("{}: shape {} vs {}", input, shape_string(a.shape), shape_string(b.shape)));
      return {};
    }
    const std::size_t classes = static_cast<std::size_t>(a.shape.back());
    const std::size_t slots = la->size / std::max<std::size_t>(classes, 1);
    const auto x = a.to_doubles(), y = b.to_doubles();
    std::vector<double> bx, by;
    if (!boxes.empty()) {
      const Tensor& ba = *ref.at(boxes);
      const Tensor& bb = *cand.at(boxes);
      if (ba.shape.empty() || ba.shape.back() != 4 || !ba.element_count() || *ba.element_count() != la->items * slots * 4 || ba.shape != bb.shape) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("slots gate: boxes output '{}' has shape {}; expected {} boxes of 4 values",
                                                              boxes, shape_string(ba.shape), la->items * slots)};
      }
      bx = ba.to_doubles();
      by = bb.to_doubles();
    }
    // Softmax DETR heads end with a no-object class that is never a detection.
    const std::size_t real = activation == Activation::kSoftmax && classes > 1 ? classes - 1 : classes;
    for (std::size_t item = 0; item < la->items; ++item) {
      const std::string name = item_name(input, item, la->items);
      const std::size_t dets_before = dets_ref_;
      for (std::size_t s = 0; s < slots; ++s) {
        const std::size_t at = (item * slots + s) * classes;
        const auto p = activate(std::span<const double>(x).subspan(at, classes), activation);
        const auto q = activate(std::span<const double>(y).subspan(at, classes), activation);
        const auto cp = top_k(std::span<const double>(p).first(real), 1)[0], cq = top_k(std::span<const double>(q).first(real), 1)[0];
        const bool on_ref = p[cp] >= threshold, on_cand = q[cq] >= threshold;
        ++slots_;
        dets_ref_ += on_ref;
        dets_cand_ += on_cand;
        if (on_ref && !on_cand) {
          ++lost_;
          example(fmt::format("{} slot {}: class {} at {} fell below {} ({})", name, s, cp, num(p[cp]), num(threshold), num(q[cq])));
        } else if (!on_ref && on_cand) {
          ++gained_;
          example(fmt::format("{} slot {}: class {} at {} rose above {} (was {})", name, s, cq, num(q[cq]), num(threshold), num(p[cp])));
        } else if (on_ref && cp != cq) {
          ++class_flips_;
          example(fmt::format("{} slot {}: class {} ({}) became class {} ({})", name, s, cp, num(p[cp]), cq, num(q[cq])));
        } else if (on_ref && min_box_iou > 0) {
          const double iou = quad_iou(quad(bx, (item * slots + s) * 4), quad(by, (item * slots + s) * 4));
          if (iou < min_box_iou) {
            ++moved_;
            example(fmt::format("{} slot {}: box moved (IoU {} < {})", name, s, num(iou), num(min_box_iou)));
          }
        }
      }
      vacuous_.add(dets_ref_ > dets_before);
    }
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "slots";
    g.title = fmt::format("slots · {}", scores);
    const std::size_t changed = lost_ + gained_ + class_flips_ + moved_;
    g.passed = slots_ > 0 && static_cast<double>(changed) <= max_changed && shape_changes_ == 0;
    g.summary = fmt::format("{} vs {} detections in {} slots at threshold {}, {}; {} class flip{}{}; {} changes allowed", dets_ref_,
                            dets_cand_, slots_, num(threshold), changes_phrase(lost_, gained_), class_flips_, class_flips_ == 1 ? "" : "s",
                            min_box_iou > 0 ? fmt::format(", {} boxes moved (IoU < {})", moved_, num(min_box_iou)) : "",
                            num(max_changed));
    if (shape_changes_) g.details.push_back(fmt::format("{} inputs gave outputs of different shapes", shape_changes_));
    g.details.insert(g.details.end(), examples_.begin(), examples_.end());
    if (example_count_ > examples_.size()) g.details.push_back(fmt::format("... and {} more", example_count_ - examples_.size()));
    g.stats_json = json_text(nlohmann::json{{"slots", slots_}, {"detections_ref", dets_ref_}, {"detections_cand", dets_cand_}, {"lost", lost_},
                                  {"gained", gained_}, {"class_flips", class_flips_}, {"boxes_moved", moved_}, {"threshold", threshold},
                                  {"shape_changes", shape_changes_}});
    vacuous_.apply(g);
    return g;
  }

 private:
  Quad quad(const std::vector<double>& v, std::size_t at) const {
    const double a = v[at], b = v[at + 1], c = v[at + 2], d = v[at + 3];
    if (box_format == "xyxy") return axis_aligned_quad(a, b, c, d);
    if (box_format == "xywh") return axis_aligned_quad(a, b, a + c, b + d);
    return axis_aligned_quad(a - c / 2, b - d / 2, a + c / 2, b + d / 2);
  }
  void example(std::string line) {
    ++example_count_;
    if (examples_.size() < kExamples) examples_.push_back(std::move(line));
  }
  std::size_t slots_ = 0, dets_ref_ = 0, dets_cand_ = 0, lost_ = 0, gained_ = 0, class_flips_ = 0, moved_ = 0;
  std::size_t shape_changes_ = 0, example_count_ = 0;
  std::vector<std::string> examples_;
  VacuousCount vacuous_;
};

}  // namespace

Result<std::unique_ptr<ParityGate>> make_classification_gate(GateParams& p) {
  auto g = std::make_unique<ClassificationGate>();
  g->output = p.text("output", "");
  auto act = activation_from_name(p.text("activation", "softmax"));
  p.require(act.ok(), act ? "" : act.error().message);
  if (act) g->activation = *act;
  g->k = static_cast<std::size_t>(p.integer("top_k", 5, 1, 1'000'000));
  if (p.has("threshold")) g->threshold = p.number("threshold", 0.5);
  g->min_top1 = p.number("min_top1", 1.0);
  g->min_topk = p.number("min_topk", 1.0);
  g->max_flips = p.number("max_threshold_flips", 0);
  p.require(!g->output.empty(), "needs 'output', the scores output");
  p.require(g->min_top1 >= 0 && g->min_top1 <= 1 && g->min_topk >= 0 && g->min_topk <= 1, "min_top1 and min_topk are fractions in [0, 1]");
  RUNG_RETURN_IF_ERROR(p.finish());
  return std::unique_ptr<ParityGate>(std::move(g));
}

Result<std::unique_ptr<ParityGate>> make_slots_gate(GateParams& p) {
  auto g = std::make_unique<SlotsGate>();
  g->scores = p.text("output", "");
  g->boxes = p.text("boxes", "");
  auto act = activation_from_name(p.text("activation", "sigmoid"));
  p.require(act.ok(), act ? "" : act.error().message);
  if (act) g->activation = *act;
  p.require(p.has("threshold"), "needs 'threshold', the operating point");
  g->threshold = p.number("threshold", 0.5);
  g->min_box_iou = p.number("min_box_iou", 0);
  g->box_format = p.text("box_format", "cxcywh");
  g->max_changed = p.number("max_changed", 0);
  p.require(!g->scores.empty(), "needs 'output', the per-slot class scores [.., slots, classes]");
  p.require(g->box_format == "cxcywh" || g->box_format == "xyxy" || g->box_format == "xywh", "box_format is cxcywh, xyxy or xywh");
  RUNG_RETURN_IF_ERROR(p.finish());
  return std::unique_ptr<ParityGate>(std::move(g));
}

}  // namespace rung
