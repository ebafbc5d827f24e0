// The variable-length detection gate: boxes from a probability map (PP-OCR's
// DB post-processing) or from a model that already ran NMS, matched one to one
// by IoU; recall and precision of the candidate against the reference, per
// size band, and a flag when the losses crowd into one band.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "parity/gates/gate.h"
#include "rung/json_text.h"
#include "rung/decode.h"

namespace rung {
namespace {

struct Detected {
  Quad quad;
  double score = 0;
};

struct Band {
  std::size_t ref = 0, found = 0;     // reference boxes, and those the candidate matched
  std::size_t cand = 0, correct = 0;  // candidate boxes, and those matching a reference one
};

class BoxesGate final : public ParityGate {
 public:
  // Where boxes come from: a probability map, or boxes (and scores) outputs.
  std::string map_output;
  TextBoxOptions map_options;
  std::string boxes_output, scores_output, box_format = "xyxy";
  double score_threshold = 0.5;
  // The comparison.
  double iou = 0.5, min_size = 0, min_recall = 0.97, min_precision = 0.97;
  std::vector<double> bands{0, 16, 32, 64, 128};
  double max_band_loss_share = 0.5;
  std::size_t min_band_losses = 3;

  std::vector<std::string> outputs() const override {
    if (!map_output.empty()) return {map_output};
    return scores_output.empty() ? std::vector<std::string>{boxes_output} : std::vector<std::string>{boxes_output, scores_output};
  }
  Status check(const ModelIo& io) override {
    for (const auto& o : outputs()) {
      RUNG_RETURN_IF_ERROR(require_output(io, o, "boxes gate"));
    }
    band_stats_.assign(bands.size(), Band{});
    return {};
  }

  Status add(const std::string& input, const OutputMap& ref, const OutputMap& cand) override {
    auto r = decode(ref);
    if (!r) return r.error();
    auto c = decode(cand);
    if (!c) return c.error();
    if (r->size() != c->size()) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("boxes gate: {} items in the reference's outputs, {} in the candidate's for {}",
                                                            r->size(), c->size(), input)};
    }
    for (std::size_t item = 0; item < r->size(); ++item) compare(item_name(input, item, r->size()), (*r)[item], (*c)[item]);
    return {};
  }

  GateOutcome finish() const override {
    GateOutcome g;
    g.decoder = "boxes";
    g.title = fmt::format("boxes · {}", map_output.empty() ? boxes_output : map_output);
    std::size_t ref_n = 0, found = 0, cand_n = 0, correct = 0;
    for (const auto& b : band_stats_) ref_n += b.ref, found += b.found, cand_n += b.cand, correct += b.correct;
    const double recall = ref_n ? static_cast<double>(found) / static_cast<double>(ref_n) : 1.0;
    const double precision = cand_n ? static_cast<double>(correct) / static_cast<double>(cand_n) : 1.0;
    // A loss concentrated in one band: most of the losses, far more than the band's share of boxes.
    const std::size_t losses = ref_n - found;
    std::string concentrated;
    for (std::size_t b = 0; b < bands.size(); ++b) {
      const Band& s = band_stats_[b];
      const std::size_t lost = s.ref - s.found;
      if (losses < min_band_losses || lost == 0 || ref_n == 0) continue;
      const double loss_share = static_cast<double>(lost) / static_cast<double>(losses);
      const double box_share = static_cast<double>(s.ref) / static_cast<double>(ref_n);
      if (loss_share > max_band_loss_share && loss_share > 2 * box_share) {
        concentrated = fmt::format("loss concentrated in band {}: {} of the {} losses ({}) against {} of the boxes", band_name(b), lost,
                                   losses, percent(lost, losses), percent(s.ref, ref_n));
      }
    }
    g.passed = recall >= min_recall - 1e-12 && precision >= min_precision - 1e-12 && concentrated.empty();
    g.summary = fmt::format("{} vs {} detections, {}; recall {} (need {}), precision {} (need {}) at IoU {}{}", total_ref_, total_cand_,
                            changes_phrase(total_lost_, total_gained_), percent(found, ref_n), rate(min_recall), percent(correct, cand_n),
                            rate(min_precision), num(iou), min_size > 0 ? fmt::format(", boxes of {} px and more", num(min_size)) : "");
    for (std::size_t b = 0; b < bands.size(); ++b) {
      const Band& s = band_stats_[b];
      g.details.push_back(fmt::format("band {}: {} vs {} boxes, recall {} ({} lost), precision {} ({} gained)", band_name(b), s.ref,
                                      s.cand, percent(s.found, s.ref), s.ref - s.found, percent(s.correct, s.cand), s.cand - s.correct));
    }
    if (!concentrated.empty()) g.details.push_back(concentrated);
    if (matched_) g.details.push_back(fmt::format("{} matched pairs, mean IoU {}, lowest {}", matched_, num(iou_sum_ / static_cast<double>(matched_)), num(iou_min_)));
    g.details.insert(g.details.end(), examples_.begin(), examples_.end());
    if (example_count_ > examples_.size()) g.details.push_back(fmt::format("... and {} more", example_count_ - examples_.size()));
    nlohmann::json jb = nlohmann::json::array();
    for (std::size_t b = 0; b < bands.size(); ++b) {
      const Band& s = band_stats_[b];
      jb.push_back({{"band", band_name(b)}, {"ref", s.ref}, {"found", s.found}, {"cand", s.cand}, {"correct", s.correct}});
    }
    g.stats_json = json_text(nlohmann::json{{"detections_ref", total_ref_}, {"detections_cand", total_cand_}, {"lost", total_lost_},
                                  {"gained", total_gained_}, {"recall", recall}, {"precision", precision}, {"iou", iou},
                                  {"min_size", min_size}, {"bands", jb}, {"concentrated", concentrated}});
    g.shown = shown_;
    vacuous_.apply(g);
    return g;
  }

 private:
  // " [(x0, y0)-(x1, y1) 0.87, ...]": each box's bounding corners and score.
  static std::string describe_boxes(const std::vector<Detected>& boxes) {
    std::string out;
    for (const auto& d : boxes) {
      double x0 = d.quad[0].x, y0 = d.quad[0].y, x1 = x0, y1 = y0;
      for (const auto& p : d.quad) x0 = std::min(x0, p.x), y0 = std::min(y0, p.y), x1 = std::max(x1, p.x), y1 = std::max(y1, p.y);
      out += fmt::format("{}({}, {})-({}, {}) {}", out.empty() ? ": " : ", ", num(x0), num(y0), num(x1), num(y1), num(d.score));
    }
    return out;
  }
  std::string band_name(std::size_t b) const {
    if (b + 1 < bands.size()) return fmt::format("[{}, {}) px", num(bands[b]), num(bands[b + 1]));
    return fmt::format("[{}, inf) px", num(bands[b]));
  }
  std::size_t band_of(double size) const {
    std::size_t b = 0;
    while (b + 1 < bands.size() && size >= bands[b + 1]) ++b;
    return b;
  }

  Result<std::vector<std::vector<Detected>>> decode(const OutputMap& outs) const {
    std::vector<std::vector<Detected>> items;
    if (!map_output.empty()) {
      const Tensor& t = *outs.at(map_output);
      auto l = item_layout(t, 2, "boxes gate");
      if (!l) return l.error();
      const auto h = static_cast<std::size_t>(t.shape[t.shape.size() - 2]), w = static_cast<std::size_t>(t.shape.back());
      const auto v = to_floats(t);
      for (std::size_t i = 0; i < l->items; ++i) {
        std::vector<Detected> d;
        for (const auto& b : extract_text_boxes(std::span<const float>(v).subspan(i * h * w, h * w), h, w, map_options)) d.push_back({b.quad, b.score});
        items.push_back(std::move(d));
      }
      return items;
    }
    const Tensor& bt = *outs.at(boxes_output);
    if (bt.shape.empty() || bt.shape.back() != 4) {
      return Error{ErrorCode::kInvalidArgument, fmt::format("boxes gate: output '{}' has shape {}; expected [.., N, 4]", boxes_output, shape_string(bt.shape))};
    }
    auto l = item_layout(bt, 2, "boxes gate");
    if (!l) return l.error();
    const std::size_t n = l->size / 4;
    const auto bv = bt.to_doubles();
    std::vector<double> sv;
    if (!scores_output.empty()) {
      const Tensor& st = *outs.at(scores_output);
      if (auto count = st.element_count(); !count || *count != l->items * n) {
        return Error{ErrorCode::kInvalidArgument, fmt::format("boxes gate: scores '{}' has shape {}, boxes '{}' has {}; expected one score per box",
                                                              scores_output, shape_string(st.shape), boxes_output, shape_string(bt.shape))};
      }
      sv = st.to_doubles();
    }
    for (std::size_t i = 0; i < l->items; ++i) {
      std::vector<Detected> d;
      for (std::size_t k = 0; k < n; ++k) {
        const double score = sv.empty() ? 1.0 : sv[i * n + k];
        if (!(score >= score_threshold)) continue;
        const double* b = bv.data() + (i * n + k) * 4;
        Quad q = box_format == "xywh"     ? axis_aligned_quad(b[0], b[1], b[0] + b[2], b[1] + b[3])
                 : box_format == "cxcywh" ? axis_aligned_quad(b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2)
                                          : axis_aligned_quad(b[0], b[1], b[2], b[3]);
        d.push_back({q, score});
      }
      items.push_back(std::move(d));
    }
    return items;
  }

  void compare(const std::string& name, const std::vector<Detected>& r, const std::vector<Detected>& c) {
    vacuous_.add(!r.empty());
    if (show) {
      shown_.push_back(fmt::format("{}: ref {} box{}{}", name, r.size(), r.size() == 1 ? "" : "es", describe_boxes(r)));
      shown_.push_back(fmt::format("{}: cand {} box{}{}", name, c.size(), c.size() == 1 ? "" : "es", describe_boxes(c)));
    }
    std::vector<Quad> rq, cq;
    for (const auto& d : r) rq.push_back(d.quad);
    for (const auto& d : c) cq.push_back(d.quad);
    const BoxMatch m = match_by_iou(rq, cq, iou);
    std::vector<bool> ref_found(r.size()), cand_ok(c.size());
    for (std::size_t k = 0; k < m.matched.size(); ++k) {
      ref_found[m.matched[k].first] = cand_ok[m.matched[k].second] = true;
      ++matched_;
      iou_sum_ += m.iou[k];
      iou_min_ = std::min(iou_min_, m.iou[k]);
    }
    total_ref_ += r.size();
    total_cand_ += c.size();
    total_lost_ += m.ref_only.size();
    total_gained_ += m.cand_only.size();
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double size = quad_short_side(r[i].quad);
      if (size < min_size) continue;
      Band& b = band_stats_[band_of(size)];
      ++b.ref;
      b.found += ref_found[i];
      if (!ref_found[i]) example(fmt::format("{}: lost a {} px box at ({}, {}), score {}", name, num(std::round(size)), num(r[i].quad[0].x), num(r[i].quad[0].y), num(r[i].score)));
    }
    for (std::size_t j = 0; j < c.size(); ++j) {
      const double size = quad_short_side(c[j].quad);
      if (size < min_size) continue;
      Band& b = band_stats_[band_of(size)];
      ++b.cand;
      b.correct += cand_ok[j];
      if (!cand_ok[j]) example(fmt::format("{}: gained a {} px box at ({}, {}), score {}", name, num(std::round(size)), num(c[j].quad[0].x), num(c[j].quad[0].y), num(c[j].score)));
    }
  }

  void example(std::string line) {
    ++example_count_;
    if (examples_.size() < 10) examples_.push_back(std::move(line));
  }

  std::vector<Band> band_stats_;
  VacuousCount vacuous_;
  std::vector<std::string> shown_;
  std::size_t total_ref_ = 0, total_cand_ = 0, total_lost_ = 0, total_gained_ = 0, matched_ = 0, example_count_ = 0;
  double iou_sum_ = 0, iou_min_ = 1;
  std::vector<std::string> examples_;
};

}  // namespace

Result<std::unique_ptr<ParityGate>> make_boxes_gate(GateParams& p) {
  auto g = std::make_unique<BoxesGate>();
  g->map_output = p.text("output", "");
  g->boxes_output = p.text("boxes", "");
  g->scores_output = p.text("scores", "");
  p.require(g->map_output.empty() != g->boxes_output.empty(),
            "needs either 'output' (a probability map, boxes by PP-OCR's post-processing) or 'boxes' (boxes after NMS), not both");
  if (!g->map_output.empty()) {
    g->map_options.threshold = p.number("threshold", 0.3);
    g->map_options.box_threshold = p.number("box_threshold", 0.6);
    g->map_options.unclip_ratio = p.number("unclip_ratio", 1.5);
    g->map_options.min_size = p.number("min_box_size", 3);
    g->map_options.max_candidates = static_cast<std::size_t>(p.integer("max_candidates", 1000, 1, 1'000'000));
    p.require(g->scores_output.empty(), "'scores' goes with 'boxes', not with a probability map");
  } else {
    g->box_format = p.text("box_format", "xyxy");
    g->score_threshold = p.number("score_threshold", 0.5);
    p.require(g->box_format == "cxcywh" || g->box_format == "xyxy" || g->box_format == "xywh", "box_format is xyxy, xywh or cxcywh");
  }
  g->iou = p.number("iou", 0.5);
  g->min_size = p.number("min_size", 0);
  g->min_recall = p.number("min_recall", 0.97);
  g->min_precision = p.number("min_precision", 0.97);
  g->bands = p.numbers("bands", g->bands);
  g->max_band_loss_share = p.number("max_band_loss_share", 0.5);
  g->min_band_losses = static_cast<std::size_t>(p.integer("min_band_losses", 3, 1, 1'000'000'000));
  p.require(g->iou > 0 && g->iou <= 1, "'iou' must be in (0, 1]");
  p.require(!g->bands.empty() && g->bands[0] == 0 && std::is_sorted(g->bands.begin(), g->bands.end()) &&
                std::adjacent_find(g->bands.begin(), g->bands.end()) == g->bands.end(),
            "'bands' are increasing band edges in pixels starting at 0, e.g. [0, 16, 32, 64]");
  p.require(g->min_recall >= 0 && g->min_recall <= 1 && g->min_precision >= 0 && g->min_precision <= 1,
            "min_recall and min_precision are fractions in [0, 1]");
  RUNG_RETURN_IF_ERROR(p.finish());
  return std::unique_ptr<ParityGate>(std::move(g));
}

}  // namespace rung
