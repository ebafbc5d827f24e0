// Resizing and upright crops of quads.
#include <algorithm>
#include <array>
#include <cmath>

#include "rung/image.h"

namespace rung {
namespace {

// Bilinear sample at (x, y) in pixel coordinates, edges replicated.
void sample(const Image& src, double x, double y, std::uint8_t* out) {
  x = std::clamp(x, 0.0, static_cast<double>(src.width - 1));
  y = std::clamp(y, 0.0, static_cast<double>(src.height - 1));
  const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
  const int x1 = std::min(x0 + 1, src.width - 1), y1 = std::min(y0 + 1, src.height - 1);
  const double fx = x - x0, fy = y - y0;
  const auto at = [&](int px, int py, int c) {
    return static_cast<double>(src.pixels[(static_cast<std::size_t>(py) * static_cast<std::size_t>(src.width) + static_cast<std::size_t>(px)) *
                                              static_cast<std::size_t>(src.channels) + static_cast<std::size_t>(c)]);
  };
  for (int c = 0; c < src.channels; ++c) {
    const double top = at(x0, y0, c) * (1 - fx) + at(x1, y0, c) * fx;
    const double bottom = at(x0, y1, c) * (1 - fx) + at(x1, y1, c) * fx;
    out[c] = static_cast<std::uint8_t>(std::clamp(std::lround(top * (1 - fy) + bottom * fy), 0L, 255L));
  }
}

// OpenCV's bicubic kernel (A = -0.75), the weights of the four taps around t in [0, 1).
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  const auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  const auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  return {far(1 + t), near(t), near(1 - t), far(2 - t)};
}

// Bicubic sample at (x, y), edges replicated (PP-OCR's crops: INTER_CUBIC, BORDER_REPLICATE).
void sample_cubic(const Image& src, double x, double y, std::uint8_t* out) {
  const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
  const auto wx = cubic_weights(x - x0), wy = cubic_weights(y - y0);
  std::array<std::size_t, 4> cols{}, rows{};
  for (int k = 0; k < 4; ++k) {
    cols[static_cast<std::size_t>(k)] = static_cast<std::size_t>(std::clamp(x0 - 1 + k, 0, src.width - 1));
    rows[static_cast<std::size_t>(k)] = static_cast<std::size_t>(std::clamp(y0 - 1 + k, 0, src.height - 1));
  }
  const auto channels = static_cast<std::size_t>(src.channels), width = static_cast<std::size_t>(src.width);
  for (std::size_t c = 0; c < channels; ++c) {
    double v = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      double row = 0;
      for (std::size_t i = 0; i < 4; ++i) row += wx[i] * src.pixels[(rows[j] * width + cols[i]) * channels + c];
      v += wy[j] * row;
    }
    out[c] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
  }
}

Image blank(int width, int height, int channels) {
  Image img;
  img.width = std::max(width, 1);
  img.height = std::max(height, 1);
  img.channels = channels;
  img.pixels.assign(static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * static_cast<std::size_t>(channels), 0);
  return img;
}

std::uint8_t* pixel(Image& img, int x, int y) {
  return img.pixels.data() + (static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) + static_cast<std::size_t>(x)) *
                                 static_cast<std::size_t>(img.channels);
}

// Solves the 8 unknowns of the homography taking the output rectangle's
// corners to the quad's (Gaussian elimination with partial pivoting).
bool homography(const std::array<Point, 4>& from, const Quad& to, std::array<double, 9>& h) {
  double a[8][9] = {};
  for (int i = 0; i < 4; ++i) {
    const double x = from[static_cast<std::size_t>(i)].x, y = from[static_cast<std::size_t>(i)].y;
    const double u = to[static_cast<std::size_t>(i)].x, v = to[static_cast<std::size_t>(i)].y;
    double r1[9] = {x, y, 1, 0, 0, 0, -u * x, -u * y, u};
    double r2[9] = {0, 0, 0, x, y, 1, -v * x, -v * y, v};
    std::copy(r1, r1 + 9, a[2 * i]);
    std::copy(r2, r2 + 9, a[2 * i + 1]);
  }
  for (int col = 0; col < 8; ++col) {
    int best = col;
    for (int r = col + 1; r < 8; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[best][col])) best = r;
    }
    if (std::fabs(a[best][col]) < 1e-12) return false;
    std::swap(a[col], a[best]);
    for (int r = 0; r < 8; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (int c = col; c < 9; ++c) a[r][c] -= f * a[col][c];
    }
  }
  for (int i = 0; i < 8; ++i) h[static_cast<std::size_t>(i)] = a[i][8] / a[i][i];
  h[8] = 1;
  return true;
}

}  // namespace

Image resize_bilinear(const Image& src, int width, int height) {
  Image out = blank(width, height, src.channels);
  if (src.width <= 0 || src.height <= 0) return out;
  const double sx = static_cast<double>(src.width) / out.width, sy = static_cast<double>(src.height) / out.height;
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) sample(src, (x + 0.5) * sx - 0.5, (y + 0.5) * sy - 0.5, pixel(out, x, y));
  }
  return out;
}

Image crop_quad(const Image& src, const Quad& quad) {
  const auto dist = [](const Point& a, const Point& b) { return std::hypot(a.x - b.x, a.y - b.y); };
  const int w = std::max(1, static_cast<int>(std::max(dist(quad[0], quad[1]), dist(quad[2], quad[3]))));
  const int h = std::max(1, static_cast<int>(std::max(dist(quad[0], quad[3]), dist(quad[1], quad[2]))));
  Image out = blank(w, h, src.channels);
  std::array<double, 9> m{};
  const std::array<Point, 4> rect{Point{0, 0}, Point{double(w), 0}, Point{double(w), double(h)}, Point{0, double(h)}};
  if (src.width <= 0 || !homography(rect, quad, m)) return out;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double d = m[6] * x + m[7] * y + m[8];
      sample_cubic(src, (m[0] * x + m[1] * y + m[2]) / d, (m[3] * x + m[4] * y + m[5]) / d, pixel(out, x, y));
    }
  }
  if (h < 1.5 * w) return out;
  // Turned a quarter counter-clockwise, as numpy's rot90 does in PP-OCR.
  Image turned = blank(h, w, src.channels);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) std::copy_n(pixel(out, x, y), src.channels, pixel(turned, y, w - 1 - x));
  }
  return turned;
}

Image rotate_180(const Image& src) {
  Image out = src;
  const auto channels = static_cast<std::size_t>(src.channels);
  const std::size_t pixels = out.pixels.size() / std::max<std::size_t>(channels, 1);
  for (std::size_t i = 0; i < pixels / 2; ++i) {
    std::swap_ranges(out.pixels.begin() + static_cast<std::ptrdiff_t>(i * channels),
                     out.pixels.begin() + static_cast<std::ptrdiff_t>((i + 1) * channels),
                     out.pixels.begin() + static_cast<std::ptrdiff_t>((pixels - 1 - i) * channels));
  }
  return out;
}

}  // namespace rung
