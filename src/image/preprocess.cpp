// A declared preprocessing: fit, channel order, normalisation, layout.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "os/json_input.h"
#include "rung/json_text.h"
#include "rung/image.h"

namespace rung {
namespace {

const char* fit_name(ImagePreprocess::Fit f) {
  switch (f) {
    case ImagePreprocess::Fit::kResize: return "resize";
    case ImagePreprocess::Fit::kLetterbox: return "letterbox";
    case ImagePreprocess::Fit::kHeight: return "height";
    case ImagePreprocess::Fit::kLimit: return "limit";
  }
  return "?";
}

int ceil_to(int v, int multiple) {
  const int m = std::max(multiple, 1);
  return (v + m - 1) / m * m;
}

}  // namespace

Result<ImagePreprocess> ImagePreprocess::from_json_text(const std::string& text) {
  auto parsed = parse_json(text);
  if (!parsed) return Error{ErrorCode::kInvalidArgument, fmt::format("preprocessing: {}", parsed.error().message)};
  JsonFields f(*parsed, "preprocessing");
  ImagePreprocess p;
  const std::string fit = f.text("fit", "resize");
  if (fit == "resize") p.fit = Fit::kResize;
  else if (fit == "letterbox") p.fit = Fit::kLetterbox;
  else if (fit == "height") p.fit = Fit::kHeight;
  else if (fit == "limit") p.fit = Fit::kLimit;
  else f.require(false, fmt::format("unknown fit '{}' (expected resize, letterbox, height, limit)", fit));
  p.width = static_cast<int>(f.integer("width", 0, 0, kMaxImageSide));
  p.height = static_cast<int>(f.integer("height", 0, 0, kMaxImageSide));
  p.max_side = static_cast<int>(f.integer("max_side", p.max_side, 1, kMaxImageSide));
  p.multiple = static_cast<int>(f.integer("multiple", 1, 1, 4096));
  p.pad = f.number("pad", 0);
  p.channels = f.text("channels", p.channels);
  f.require(p.channels == "RGB" || p.channels == "BGR" || p.channels == "GRAY",
            fmt::format("unknown channels '{}' (expected RGB, BGR, GRAY)", p.channels));
  p.scale = f.number("scale", p.scale);
  for (const char* k : {"mean", "std"}) {
    auto v = f.numbers(k, {});
    if (!f.has(k)) continue;
    f.require(v.size() == 1 || v.size() == 3, fmt::format("'{}' takes 1 or 3 values", k));
    if (v.size() == 1) v = {v[0], v[0], v[0]};
    if (v.size() == 3) std::copy(v.begin(), v.end(), (std::string_view(k) == "mean" ? p.mean : p.stddev).begin());
  }
  p.layout = f.text("layout", p.layout);
  f.require(p.layout == "NCHW" || p.layout == "NHWC", fmt::format("unknown layout '{}' (expected NCHW, NHWC)", p.layout));
  const std::string type = f.text("type", "float32");
  if (type == "float32") p.type = ElementType::kFloat;
  else if (type == "uint8") p.type = ElementType::kUint8;
  else f.require(false, fmt::format("unknown type '{}' (expected float32, uint8)", type));
  f.skip("input");  // which model input: read by the caller
  RUNG_RETURN_IF_ERROR(f.finish());
  const bool needs_box = p.fit == Fit::kResize || p.fit == Fit::kLetterbox;
  if (needs_box && (p.width <= 0 || p.height <= 0)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("fit '{}' needs a positive width and height", fit_name(p.fit))};
  }
  if (p.fit == Fit::kHeight && p.height <= 0) return Error{ErrorCode::kInvalidArgument, "fit 'height' needs a positive height"};
  for (double s : p.stddev) {
    if (s == 0) return Error{ErrorCode::kInvalidArgument, "std must not be 0"};
  }
  // Bounded so that a value stays a float: the normalised pixel is at most 255 * 1e6 / 1e-6.
  auto modest = [](double v) { return std::abs(v) <= 1e6; };
  if (!modest(p.scale) || !modest(p.pad) || !std::all_of(p.mean.begin(), p.mean.end(), modest) ||
      !std::all_of(p.stddev.begin(), p.stddev.end(), [&](double s) { return modest(s) && std::abs(s) >= 1e-6; })) {
    return Error{ErrorCode::kInvalidArgument, "scale, pad, mean and std must be within ±1e6 (and std at least 1e-6 from 0)"};
  }
  return p;
}

std::string ImagePreprocess::to_json_text() const {
  nlohmann::json j = {{"fit", fit_name(fit)}, {"width", width},   {"height", height},   {"max_side", max_side},
                      {"multiple", multiple}, {"pad", pad},       {"channels", channels}, {"scale", scale},
                      {"mean", mean},         {"std", stddev},    {"layout", layout},
                      {"type", element_type_name(type)}};
  return json_text(j);
}

namespace {

// Where the resized image lands on the canvas, computed in doubles and each side
// kept within kMaxImageSide, so an extreme aspect ratio cannot overflow an int.
struct Canvas {
  int new_w = 1, new_h = 1, canvas_w = 1, canvas_h = 1, off_x = 0, off_y = 0;
  bool clamped = false;  // a side was beyond kMaxImageSide
};

int side(double v, bool& clamped) {
  if (!(v <= kMaxImageSide)) clamped = true;
  return static_cast<int>(std::clamp(v, 1.0, static_cast<double>(kMaxImageSide)));
}

Canvas plan_canvas(int image_w, int image_h, const ImagePreprocess& p) {
  const double w = std::max(image_w, 1), h = std::max(image_h, 1);
  Canvas c{p.width, p.height, p.width, p.height, 0, 0, false};
  switch (p.fit) {
    case ImagePreprocess::Fit::kResize: break;
    case ImagePreprocess::Fit::kLetterbox: {
      const double r = std::min(p.width / w, p.height / h);
      c.new_w = std::clamp(side(std::round(w * r), c.clamped), 1, p.width);
      c.new_h = std::clamp(side(std::round(h * r), c.clamped), 1, p.height);
      c.off_x = (p.width - c.new_w) / 2;
      c.off_y = (p.height - c.new_h) / 2;
      break;
    }
    case ImagePreprocess::Fit::kHeight:
      c.new_h = c.canvas_h = p.height;
      c.new_w = side(std::ceil(p.height * w / h), c.clamped);
      c.canvas_w = side(static_cast<double>(ceil_to(std::max(p.width, c.new_w), p.multiple)), c.clamped);
      break;
    case ImagePreprocess::Fit::kLimit: {
      const double r = std::max(w, h) > p.max_side ? p.max_side / std::max(w, h) : 1.0;
      const double m = std::max(p.multiple, 1);
      c.new_w = c.canvas_w = side(std::max(m, std::round(w * r / m) * m), c.clamped);
      c.new_h = c.canvas_h = side(std::max(m, std::round(h * r / m) * m), c.clamped);
      break;
    }
  }
  return c;
}

std::vector<std::int64_t> tensor_shape(const Canvas& c, const ImagePreprocess& p) {
  const std::int64_t channels = p.channels == "GRAY" ? 1 : 3;
  return p.layout == "NCHW" ? std::vector<std::int64_t>{1, channels, c.canvas_h, c.canvas_w}
                            : std::vector<std::int64_t>{1, c.canvas_h, c.canvas_w, channels};
}

}  // namespace

Result<std::vector<std::int64_t>> image_tensor_shape(int image_width, int image_height, const ImagePreprocess& p, const std::string& what,
                                                     std::uint64_t max_bytes) {
  const Canvas c = plan_canvas(image_width, image_height, p);
  const auto shape = tensor_shape(c, p);
  if (c.clamped) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: a {}x{} image preprocessed ({}) would be wider or taller than {} px",
                                                          what, image_width, image_height, fit_name(p.fit), kMaxImageSide)};
  }
  auto bytes = tensor_bytes(what, p.type, shape, max_bytes);
  if (!bytes) return bytes.error();
  return shape;
}

Tensor image_to_tensor(const Image& image, const ImagePreprocess& p, const std::string& name, ImageGeometry* geometry) {
  const int w = std::max(image.width, 1), h = std::max(image.height, 1);
  const Canvas plan = plan_canvas(image.width, image.height, p);
  const int canvas_w = plan.canvas_w, canvas_h = plan.canvas_h, new_w = plan.new_w, new_h = plan.new_h, off_x = plan.off_x, off_y = plan.off_y;
  const Image resized = resize_bilinear(image, new_w, new_h);
  const int channels = p.channels == "GRAY" ? 1 : 3;
  const auto cw = static_cast<std::size_t>(canvas_w), ch = static_cast<std::size_t>(canvas_h), cc = static_cast<std::size_t>(channels);
  // Raw values first, in the declared channel order; padding where no pixel lands.
  std::vector<double> raw(cw * ch * cc, p.pad);
  for (int y = 0; y < new_h; ++y) {
    for (int x = 0; x < new_w; ++x) {
      const std::uint8_t* px = resized.pixels.data() + (static_cast<std::size_t>(y) * static_cast<std::size_t>(new_w) + static_cast<std::size_t>(x)) *
                                                           static_cast<std::size_t>(resized.channels);
      const std::uint8_t* last = resized.channels >= 3 ? px : nullptr;
      const double rgb[3] = {static_cast<double>(px[0]), static_cast<double>(last ? last[1] : px[0]),
                             static_cast<double>(last ? last[2] : px[0])};
      const std::size_t at = (static_cast<std::size_t>(y + off_y) * cw + static_cast<std::size_t>(x + off_x)) * cc;
      if (channels == 1) {
        raw[at] = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
      } else {
        const bool bgr = p.channels == "BGR";
        for (std::size_t c = 0; c < 3; ++c) raw[at + c] = rgb[bgr ? 2 - c : c];
      }
    }
  }
  Tensor t;
  t.name = name;
  t.type = p.type;
  const bool nchw = p.layout == "NCHW";
  t.shape = tensor_shape(plan, p);
  t.bytes.resize(cw * ch * cc * element_size(p.type));
  for (std::size_t y = 0; y < ch; ++y) {
    for (std::size_t x = 0; x < cw; ++x) {
      for (std::size_t c = 0; c < cc; ++c) {
        const double v = raw[(y * cw + x) * cc + c];
        const std::size_t dst = nchw ? (c * ch + y) * cw + x : (y * cw + x) * cc + c;
        if (p.type == ElementType::kUint8) {
          reinterpret_cast<std::uint8_t*>(t.bytes.data())[dst] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        } else {
          reinterpret_cast<float*>(t.bytes.data())[dst] = static_cast<float>((v * p.scale - p.mean[c]) / p.stddev[c]);
        }
      }
    }
  }
  if (geometry != nullptr) {
    *geometry = {static_cast<double>(new_w) / w, static_cast<double>(new_h) / h, static_cast<double>(off_x), static_cast<double>(off_y),
                 image.width, image.height};
  }
  return t;
}

}  // namespace rung
