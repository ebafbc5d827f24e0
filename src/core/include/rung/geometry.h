// Plane geometry the decoders share: points, quadrilaterals (a detected text
// line or a box), polygon area and intersection, the minimum-area rectangle.
#pragma once

#include <array>
#include <vector>

namespace rung {

struct Point {
  double x = 0;
  double y = 0;
};

// Four corners, clockwise from the top-left one (in image coordinates, y down).
using Quad = std::array<Point, 4>;

Quad axis_aligned_quad(double x1, double y1, double x2, double y2);
double polygon_area(const std::vector<Point>& polygon);  // absolute, shoelace
double quad_area(const Quad& q);
// The lengths of the quad's two sides at its first corner: width (0->1) and height (1->2).
double quad_width(const Quad& q);
double quad_height(const Quad& q);
double quad_short_side(const Quad& q);
// Intersection over union of two convex quads (0 when either is degenerate).
double quad_iou(const Quad& a, const Quad& b);
// The smallest-area rectangle holding every point (convex hull, then rotating
// calipers), ordered as a Quad. Fewer than 3 distinct points give a degenerate quad.
Quad min_area_rect(std::vector<Point> points);
// Reorders four corners clockwise from the top-left (smallest x+y) one.
Quad order_quad(Quad q);

}  // namespace rung
