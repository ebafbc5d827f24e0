#include "rung/geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rung {
namespace {

double cross(const Point& o, const Point& a, const Point& b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }
double distance(const Point& a, const Point& b) { return std::hypot(a.x - b.x, a.y - b.y); }

// Andrew's monotone chain; counter-clockwise in a y-up frame.
std::vector<Point> convex_hull(std::vector<Point> p) {
  std::sort(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  p.erase(std::unique(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.x == b.x && a.y == b.y; }), p.end());
  if (p.size() < 3) return p;
  std::vector<Point> h(2 * p.size());
  std::size_t k = 0;
  for (const auto& pt : p) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], pt) <= 0) --k;
    h[k++] = pt;
  }
  for (std::size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}

// Keeps the part of `subject` on the inner side of the directed edge a->b
// (inner = left when the clip polygon's signed area is positive).
std::vector<Point> clip(const std::vector<Point>& subject, const Point& a, const Point& b, double orientation) {
  std::vector<Point> out;
  auto inside = [&](const Point& p) { return cross(a, b, p) * orientation >= 0; };
  for (std::size_t i = 0; i < subject.size(); ++i) {
    const Point& cur = subject[i];
    const Point& prev = subject[(i + subject.size() - 1) % subject.size()];
    bool in_cur = inside(cur), in_prev = inside(prev);
    if (in_cur != in_prev) {
      double d1 = cross(a, b, prev), d2 = cross(a, b, cur);
      double t = d1 / (d1 - d2);
      out.push_back({prev.x + t * (cur.x - prev.x), prev.y + t * (cur.y - prev.y)});
    }
    if (in_cur) out.push_back(cur);
  }
  return out;
}

double signed_area(const std::vector<Point>& p) {
  double s = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Point& a = p[i];
    const Point& b = p[(i + 1) % p.size()];
    s += a.x * b.y - b.x * a.y;
  }
  return s / 2;
}

}  // namespace

Quad axis_aligned_quad(double x1, double y1, double x2, double y2) {
  return {Point{x1, y1}, Point{x2, y1}, Point{x2, y2}, Point{x1, y2}};
}

double polygon_area(const std::vector<Point>& polygon) { return std::fabs(signed_area(polygon)); }
double quad_area(const Quad& q) { return polygon_area({q.begin(), q.end()}); }
double quad_width(const Quad& q) { return distance(q[0], q[1]); }
double quad_height(const Quad& q) { return distance(q[1], q[2]); }
double quad_short_side(const Quad& q) { return std::min(quad_width(q), quad_height(q)); }

double quad_iou(const Quad& a, const Quad& b) {
  const double area_a = quad_area(a), area_b = quad_area(b);
  if (area_a <= 0 || area_b <= 0) return 0;
  std::vector<Point> clip_poly(b.begin(), b.end());
  const double orientation = signed_area(clip_poly) >= 0 ? 1.0 : -1.0;
  std::vector<Point> inter(a.begin(), a.end());
  for (std::size_t i = 0; i < 4 && !inter.empty(); ++i) inter = clip(inter, b[i], b[(i + 1) % 4], orientation);
  const double overlap = inter.size() >= 3 ? polygon_area(inter) : 0.0;
  const double uni = area_a + area_b - overlap;
  return uni > 0 ? overlap / uni : 0;
}

Quad order_quad(Quad q) {
  // As PP-OCR orders a rectangle: the two leftmost points give the left side
  // (upper one first), the two rightmost the right side.
  std::sort(q.begin(), q.end(), [](const Point& a, const Point& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  Point tl = q[0], bl = q[1], tr = q[2], br = q[3];
  if (tl.y > bl.y) std::swap(tl, bl);
  if (tr.y > br.y) std::swap(tr, br);
  return {tl, tr, br, bl};
}

Quad min_area_rect(std::vector<Point> points) {
  auto hull = convex_hull(std::move(points));
  if (hull.empty()) return {};
  if (hull.size() < 3) {
    // A point or a segment: a zero-height rectangle along it.
    const Point a = hull.front(), b = hull.back();
    return order_quad({a, b, b, a});
  }
  double best = std::numeric_limits<double>::infinity();
  Quad out{};
  for (std::size_t i = 0; i < hull.size(); ++i) {
    const Point& p = hull[i];
    const Point& q = hull[(i + 1) % hull.size()];
    const double len = distance(p, q);
    if (len == 0) continue;
    const double ux = (q.x - p.x) / len, uy = (q.y - p.y) / len;  // along the edge
    const double vx = -uy, vy = ux;                                // its normal
    double min_u = std::numeric_limits<double>::infinity(), max_u = -min_u, min_v = min_u, max_v = -min_u;
    for (const auto& h : hull) {
      const double u = (h.x - p.x) * ux + (h.y - p.y) * uy, v = (h.x - p.x) * vx + (h.y - p.y) * vy;
      min_u = std::min(min_u, u), max_u = std::max(max_u, u), min_v = std::min(min_v, v), max_v = std::max(max_v, v);
    }
    const double area = (max_u - min_u) * (max_v - min_v);
    if (area < best) {
      best = area;
      auto at = [&](double u, double v) { return Point{p.x + u * ux + v * vx, p.y + u * uy + v * vy}; };
      out = {at(min_u, min_v), at(max_u, min_v), at(max_u, max_v), at(min_u, max_v)};
    }
  }
  return order_quad(out);
}

}  // namespace rung
