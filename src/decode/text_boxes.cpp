// PP-OCR's DB post-processing (PaddleOCR's DBPostProcess, box type "quad",
// score mode "fast"): probability map -> binary map -> contours -> minimum-area
// rectangles, scored by the map's mean inside them, grown by the unclip ratio.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "rung/decode.h"

namespace rung {
namespace {

// The 8 neighbours clockwise in image coordinates (y down), starting east.
constexpr std::array<int, 8> kDx{1, 1, 0, -1, -1, -1, 0, 1};
constexpr std::array<int, 8> kDy{0, 1, 1, 1, 0, -1, -1, -1};

// The binary map, padded with a frame of zeros so border following never
// leaves it (OpenCV pads the same way). Cells hold 1 (text), 0, or a border label.
class Labels {
 public:
  Labels(std::span<const float> probability, std::size_t height, std::size_t width, double threshold)
      : w_(static_cast<int>(width) + 2), h_(static_cast<int>(height) + 2), cells_(static_cast<std::size_t>(w_) * static_cast<std::size_t>(h_), 0) {
    for (std::size_t y = 0; y < height; ++y) {
      for (std::size_t x = 0; x < width; ++x) {
        if (probability[y * width + x] > threshold) at(static_cast<int>(x) + 1, static_cast<int>(y) + 1) = 1;
      }
    }
  }
  int width() const { return w_; }
  int height() const { return h_; }
  std::int32_t& at(int x, int y) { return cells_[static_cast<std::size_t>(y) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(x)]; }

 private:
  int w_, h_;
  std::vector<std::int32_t> cells_;
};

int direction_of(int dx, int dy) {
  for (int d = 0; d < 8; ++d) {
    if (kDx[static_cast<std::size_t>(d)] == dx && kDy[static_cast<std::size_t>(d)] == dy) return d;
  }
  return 0;
}

// Follows one border (Suzuki and Abe's algorithm, as OpenCV's findContours)
// from (x, y), whose zero neighbour (the outside of this border) is `from`.
// Marks the border's pixels with `nbd` and returns them in map coordinates.
std::vector<Point> follow_border(Labels& f, int x, int y, int from, std::int32_t nbd) {
  std::vector<Point> contour;
  const auto nonzero = [&](int px, int py, int d) {
    return f.at(px + kDx[static_cast<std::size_t>(d)], py + kDy[static_cast<std::size_t>(d)]) != 0;
  };
  // (3.1) clockwise from `from`, the first nonzero neighbour.
  int first = -1;
  for (int k = 0; k < 8; ++k) {
    const int d = (from + k) % 8;
    if (nonzero(x, y, d)) {
      first = d;
      break;
    }
  }
  if (first < 0) {  // an isolated pixel
    f.at(x, y) = -nbd;
    return {Point{static_cast<double>(x - 1), static_cast<double>(y - 1)}};
  }
  const int x1 = x + kDx[static_cast<std::size_t>(first)], y1 = y + kDy[static_cast<std::size_t>(first)];
  int x2 = x1, y2 = y1, x3 = x, y3 = y;
  while (true) {
    contour.push_back({static_cast<double>(x3 - 1), static_cast<double>(y3 - 1)});
    // (3.3) counter-clockwise around (x3, y3), starting after the previous pixel.
    const int back = direction_of(x2 - x3, y2 - y3);
    bool east_zero_examined = false;
    int x4 = x3, y4 = y3;
    for (int k = 1; k <= 8; ++k) {
      const int d = (back - k + 16) % 8;
      if (nonzero(x3, y3, d)) {
        x4 = x3 + kDx[static_cast<std::size_t>(d)];
        y4 = y3 + kDy[static_cast<std::size_t>(d)];
        break;
      }
      if (d == 0) east_zero_examined = true;
    }
    // (3.4) label the pixel: negative when it is a right-hand border pixel.
    if (east_zero_examined) {
      f.at(x3, y3) = -nbd;
    } else if (f.at(x3, y3) == 1) {
      f.at(x3, y3) = nbd;
    }
    // (3.5) back at the start, about to repeat the first step.
    if (x4 == x && y4 == y && x3 == x1 && y3 == y1) break;
    x2 = x3, y2 = y3, x3 = x4, y3 = y4;
  }
  return contour;
}

// Every border of the binary map, outer and hole ones, in raster order of their
// first pixel (OpenCV's RETR_LIST; every border pixel kept, which gives the same
// minimum-area rectangles as CHAIN_APPROX_SIMPLE's corners).
std::vector<std::vector<Point>> find_contours(std::span<const float> probability, std::size_t height, std::size_t width,
                                              double threshold, std::size_t max_contours) {
  Labels f(probability, height, width, threshold);
  std::vector<std::vector<Point>> contours;
  std::int32_t nbd = 1;
  for (int y = 1; y + 1 < f.height() && contours.size() < max_contours; ++y) {
    for (int x = 1; x + 1 < f.width() && contours.size() < max_contours; ++x) {
      const std::int32_t v = f.at(x, y);
      if (v == 0) continue;
      if (v == 1 && f.at(x - 1, y) == 0) {
        contours.push_back(follow_border(f, x, y, direction_of(-1, 0), ++nbd));  // an outer border
      } else if (v >= 1 && f.at(x + 1, y) == 0) {
        contours.push_back(follow_border(f, x, y, direction_of(1, 0), ++nbd));   // a hole's border
      }
    }
  }
  return contours;
}

// Pixels inside or on a convex polygon with integer corners.
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

// PP-OCR's box_score_fast: the mean of the map over the rectangle's pixels, its
// corners truncated to whole pixels as the rectangle is rasterised.
double mean_inside(std::span<const float> map, std::size_t height, std::size_t width, const Quad& rect) {
  Quad q = rect;
  for (auto& p : q) p = {std::trunc(p.x), std::trunc(p.y)};
  double x0 = q[0].x, x1 = q[0].x, y0 = q[0].y, y1 = q[0].y;
  for (const auto& p : q) x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  const auto clampi = [](double v, std::size_t hi) {
    return static_cast<std::size_t>(std::clamp(v, 0.0, static_cast<double>(hi - 1)));
  };
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t y = clampi(y0, height); y <= clampi(y1, height); ++y) {
    for (std::size_t x = clampi(x0, width); x <= clampi(x1, width); ++x) {
      if (!inside(q, static_cast<double>(x), static_cast<double>(y))) continue;
      sum += map[y * width + x];
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : 0.0;
}

// PP-OCR's box_score_slow: the mean of the map over the pixels the contour
// encloses, its own pixels included (cv2.fillPoly of the contour).
double mean_enclosed(std::span<const float> map, std::size_t width, const std::vector<Point>& contour) {
  double top = contour[0].y, bottom = contour[0].y;
  for (const auto& p : contour) top = std::min(top, p.y), bottom = std::max(bottom, p.y);
  double sum = 0;
  std::size_t n = 0;
  std::vector<double> crossings;
  std::vector<std::pair<double, double>> spans;
  for (double y = top; y <= bottom; ++y) {
    // Interior by the even-odd rule at the pixel centres' height, then the border's own pixels on this row.
    crossings.clear();
    spans.clear();
    for (std::size_t i = 0; i < contour.size(); ++i) {
      const Point& a = contour[i];
      const Point& b = contour[(i + 1) % contour.size()];
      if ((a.y <= y) != (b.y <= y)) crossings.push_back(a.x + (y - a.y) * (b.x - a.x) / (b.y - a.y));
      if (a.y == y) spans.push_back({a.x, a.x});
    }
    std::sort(crossings.begin(), crossings.end());
    for (std::size_t i = 0; i + 1 < crossings.size(); i += 2) spans.push_back({std::ceil(crossings[i]), std::floor(crossings[i + 1])});
    std::sort(spans.begin(), spans.end());
    double covered = -1;  // the last column counted on this row
    for (const auto& [from, to] : spans) {
      for (double x = std::max(from, covered + 1); x <= to; ++x) {
        sum += map[static_cast<std::size_t>(y) * width + static_cast<std::size_t>(x)];
        ++n;
      }
      covered = std::max(covered, to);
    }
  }
  return n ? sum / static_cast<double>(n) : 0.0;
}

// Grows a rectangle by d on every side, about its centre: the minimum-area
// rectangle of PP-OCR's rounded polygon offset of a rectangle.
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
  const double out_w = options.output_width > 0 ? options.output_width : static_cast<double>(width);
  const double out_h = options.output_height > 0 ? options.output_height : static_cast<double>(height);
  for (const auto& contour : find_contours(probability, height, width, options.threshold, options.max_candidates)) {
    const Quad rect = min_area_rect(contour);
    if (quad_short_side(rect) < options.min_size) continue;
    const double score = options.contour_score ? mean_enclosed(probability, width, contour) : mean_inside(probability, height, width, rect);
    if (score < options.box_threshold) continue;
    const double perimeter = 2 * (quad_width(rect) + quad_height(rect));
    Quad grown = grow(rect, quad_area(rect) * options.unclip_ratio / perimeter);
    if (quad_short_side(grown) < options.min_size + 2) continue;
    for (auto& pt : grown) {
      pt.x = std::clamp(std::round(pt.x / static_cast<double>(width) * out_w), 0.0, out_w);
      pt.y = std::clamp(std::round(pt.y / static_cast<double>(height) * out_h), 0.0, out_h);
    }
    boxes.push_back({grown, score});
  }
  return boxes;
}

}  // namespace rung
