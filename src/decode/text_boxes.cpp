// PP-OCR's DB post-processing: probability map -> text boxes.
#include <algorithm>
#include <cmath>

#include "rung/decode.h"

namespace rung {
namespace {

// Pixel centres inside a convex quad, by the sign of every edge's cross product.
bool inside(const Quad& q, double x, double y) {
  bool pos = false, neg = false;
  for (std::size_t i = 0; i < 4; ++i) {
    const Point& a = q[i];
    const Point& b = q[(i + 1) % 4];
    const double c = (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
    pos = pos || c > 1e-9;
    neg = neg || c < -1e-9;
  }
  return !(pos && neg);
}

double mean_inside(std::span<const float> map, std::size_t height, std::size_t width, const Quad& q) {
  double x0 = q[0].x, x1 = q[0].x, y0 = q[0].y, y1 = q[0].y;
  for (const auto& p : q) x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  const auto clampi = [](double v, std::size_t hi) {
    return static_cast<std::size_t>(std::clamp(v, 0.0, static_cast<double>(hi - 1)));
  };
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t y = clampi(std::floor(y0), height); y <= clampi(std::ceil(y1), height); ++y) {
    for (std::size_t x = clampi(std::floor(x0), width); x <= clampi(std::ceil(x1), width); ++x) {
      if (!inside(q, static_cast<double>(x), static_cast<double>(y))) continue;
      sum += map[y * width + x];
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : 0.0;
}

// Grows a rectangle by d on every side, about its centre.
Quad grow(const Quad& q, double d) {
  const double w = quad_width(q), h = quad_height(q);
  if (w <= 0 || h <= 0) return q;
  const double ux = (q[1].x - q[0].x) / w, uy = (q[1].y - q[0].y) / w;
  const double vx = (q[3].x - q[0].x) / h, vy = (q[3].y - q[0].y) / h;
  const Point c{(q[0].x + q[2].x) / 2, (q[0].y + q[2].y) / 2};
  const double hw = w / 2 + d, hh = h / 2 + d;
  auto at = [&](double su, double sv) { return Point{c.x + su * hw * ux + sv * hh * vx, c.y + su * hw * uy + sv * hh * vy}; };
  return order_quad({at(-1, -1), at(1, -1), at(1, 1), at(-1, 1)});
}

}  // namespace

std::vector<TextBox> extract_text_boxes(std::span<const float> probability, std::size_t height, std::size_t width,
                                        const TextBoxOptions& options) {
  std::vector<TextBox> boxes;
  if (height == 0 || width == 0 || probability.size() < height * width) return boxes;
  std::vector<std::uint8_t> seen(height * width, 0);
  std::vector<std::size_t> stack;
  std::vector<std::pair<std::size_t, std::size_t>> row_extent;  // per row of a region: leftmost, rightmost
  std::size_t regions = 0;
  for (std::size_t start = 0; start < height * width && regions < options.max_candidates; ++start) {
    if (seen[start] || !(probability[start] > options.threshold)) continue;
    ++regions;
    // The region's hull needs only each row's extreme pixels.
    const std::size_t top = start / width;
    std::size_t bottom = top;
    row_extent.assign(height - top, {width, 0});
    stack.assign(1, start);
    seen[start] = 1;
    while (!stack.empty()) {
      const std::size_t p = stack.back();
      stack.pop_back();
      const std::size_t y = p / width, x = p % width;
      auto& e = row_extent[y - top];
      e.first = std::min(e.first, x);
      e.second = std::max(e.second, x);
      bottom = std::max(bottom, y);
      for (std::size_t ny = y ? y - 1 : 0; ny <= std::min(y + 1, height - 1); ++ny) {
        for (std::size_t nx = x ? x - 1 : 0; nx <= std::min(x + 1, width - 1); ++nx) {
          const std::size_t n = ny * width + nx;
          if (!seen[n] && probability[n] > options.threshold) {
            seen[n] = 1;
            stack.push_back(n);
          }
        }
      }
    }
    std::vector<Point> points;
    for (std::size_t y = top; y <= bottom; ++y) {
      const auto& e = row_extent[y - top];
      if (e.first > e.second) continue;
      points.push_back({static_cast<double>(e.first), static_cast<double>(y)});
      points.push_back({static_cast<double>(e.second), static_cast<double>(y)});
    }
    const Quad rect = min_area_rect(points);
    if (quad_short_side(rect) < options.min_size) continue;
    const double score = mean_inside(probability, height, width, rect);
    if (score < options.box_threshold) continue;
    const double perimeter = 2 * (quad_width(rect) + quad_height(rect));
    Quad grown = grow(rect, quad_area(rect) * options.unclip_ratio / perimeter);
    if (quad_short_side(grown) < options.min_size + 2) continue;
    for (auto& pt : grown) {
      pt.x = std::clamp(std::round(pt.x), 0.0, static_cast<double>(width));
      pt.y = std::clamp(std::round(pt.y), 0.0, static_cast<double>(height));
    }
    boxes.push_back({grown, score});
  }
  return boxes;
}

}  // namespace rung
