// Matching two runs' detections one to one by IoU.
#include <algorithm>
#include <tuple>

#include "rung/decode.h"

namespace rung {

BoxMatch match_by_iou(const std::vector<Quad>& reference, const std::vector<Quad>& candidate, double min_iou) {
  struct Bounds {
    double x0, y0, x1, y1;
  };
  auto bounds = [](const Quad& q) {
    Bounds b{q[0].x, q[0].y, q[0].x, q[0].y};
    for (const auto& p : q) b = {std::min(b.x0, p.x), std::min(b.y0, p.y), std::max(b.x1, p.x), std::max(b.y1, p.y)};
    return b;
  };
  std::vector<Bounds> cb;
  for (const auto& q : candidate) cb.push_back(bounds(q));
  std::vector<std::tuple<double, std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const Bounds a = bounds(reference[i]);
    for (std::size_t j = 0; j < candidate.size(); ++j) {
      const Bounds& b = cb[j];
      if (a.x1 < b.x0 || b.x1 < a.x0 || a.y1 < b.y0 || b.y1 < a.y0) continue;
      const double iou = quad_iou(reference[i], candidate[j]);
      if (iou >= min_iou && iou > 0) pairs.emplace_back(iou, i, j);
    }
  }
  // Highest IoU first; equal IoUs in index order, so the result is deterministic.
  std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
    if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) > std::get<0>(y);
    return std::make_pair(std::get<1>(x), std::get<2>(x)) < std::make_pair(std::get<1>(y), std::get<2>(y));
  });
  std::vector<bool> ref_used(reference.size()), cand_used(candidate.size());
  BoxMatch m;
  for (const auto& [iou, i, j] : pairs) {
    if (ref_used[i] || cand_used[j]) continue;
    ref_used[i] = cand_used[j] = true;
    m.matched.emplace_back(i, j);
    m.iou.push_back(iou);
  }
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (!ref_used[i]) m.ref_only.push_back(i);
  }
  for (std::size_t j = 0; j < candidate.size(); ++j) {
    if (!cand_used[j]) m.cand_only.push_back(j);
  }
  return m;
}

}  // namespace rung
