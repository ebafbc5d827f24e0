// A declared preprocessing: fit, channel order, normalisation, layout.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

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

int round_to(double v, int multiple) {
  const int m = std::max(multiple, 1);
  return std::max(m, static_cast<int>(std::lround(v / m)) * m);
}

int ceil_to(int v, int multiple) {
  const int m = std::max(multiple, 1);
  return (v + m - 1) / m * m;
}

}  // namespace

Result<ImagePreprocess> ImagePreprocess::from_json_text(const std::string& text) {
  ImagePreprocess p;
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object()) return Error{ErrorCode::kInvalidArgument, "the preprocessing must be a JSON object"};
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k == "fit") {
        const auto f = it->get<std::string>();
        if (f == "resize") p.fit = Fit::kResize;
        else if (f == "letterbox") p.fit = Fit::kLetterbox;
        else if (f == "height") p.fit = Fit::kHeight;
        else if (f == "limit") p.fit = Fit::kLimit;
        else return Error{ErrorCode::kInvalidArgument, fmt::format("unknown fit '{}' (expected resize, letterbox, height, limit)", f)};
      } else if (k == "width") {
        p.width = it->get<int>();
      } else if (k == "height") {
        p.height = it->get<int>();
      } else if (k == "max_side") {
        p.max_side = it->get<int>();
      } else if (k == "multiple") {
        p.multiple = it->get<int>();
      } else if (k == "pad") {
        p.pad = it->get<double>();
      } else if (k == "channels") {
        p.channels = it->get<std::string>();
        if (p.channels != "RGB" && p.channels != "BGR" && p.channels != "GRAY") {
          return Error{ErrorCode::kInvalidArgument, fmt::format("unknown channels '{}' (expected RGB, BGR, GRAY)", p.channels)};
        }
      } else if (k == "scale") {
        p.scale = it->get<double>();
      } else if (k == "mean" || k == "std") {
        auto v = it->get<std::vector<double>>();
        if (v.size() != 1 && v.size() != 3) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}' takes 1 or 3 values", k)};
        if (v.size() == 1) v = {v[0], v[0], v[0]};
        auto& target = k == "mean" ? p.mean : p.stddev;
        std::copy(v.begin(), v.end(), target.begin());
      } else if (k == "layout") {
        p.layout = it->get<std::string>();
        if (p.layout != "NCHW" && p.layout != "NHWC") {
          return Error{ErrorCode::kInvalidArgument, fmt::format("unknown layout '{}' (expected NCHW, NHWC)", p.layout)};
        }
      } else if (k == "type") {
        const auto t = it->get<std::string>();
        if (t == "float32") p.type = ElementType::kFloat;
        else if (t == "uint8") p.type = ElementType::kUint8;
        else return Error{ErrorCode::kInvalidArgument, fmt::format("unknown type '{}' (expected float32, uint8)", t)};
      } else if (k == "input") {
        continue;  // which model input: read by the caller
      } else {
        return Error{ErrorCode::kInvalidArgument,
                     fmt::format("unknown preprocessing key '{}' (expected fit, width, height, max_side, multiple, pad, channels, "
                                 "scale, mean, std, layout, type, input)", k)};
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("preprocessing: {}", e.what())};
  }
  const bool needs_box = p.fit == Fit::kResize || p.fit == Fit::kLetterbox;
  if (needs_box && (p.width <= 0 || p.height <= 0)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("fit '{}' needs a positive width and height", fit_name(p.fit))};
  }
  if (p.fit == Fit::kHeight && p.height <= 0) return Error{ErrorCode::kInvalidArgument, "fit 'height' needs a positive height"};
  if (p.fit == Fit::kLimit && p.max_side <= 0) return Error{ErrorCode::kInvalidArgument, "fit 'limit' needs a positive max_side"};
  if (p.multiple < 1) return Error{ErrorCode::kInvalidArgument, "multiple must be at least 1"};
  for (double s : p.stddev) {
    if (s == 0) return Error{ErrorCode::kInvalidArgument, "std must not be 0"};
  }
  return p;
}

std::string ImagePreprocess::to_json_text() const {
  nlohmann::json j = {{"fit", fit_name(fit)}, {"width", width},   {"height", height},   {"max_side", max_side},
                      {"multiple", multiple}, {"pad", pad},       {"channels", channels}, {"scale", scale},
                      {"mean", mean},         {"std", stddev},    {"layout", layout},
                      {"type", element_type_name(type)}};
  return j.dump();
}

Tensor image_to_tensor(const Image& image, const ImagePreprocess& p, const std::string& name, ImageGeometry* geometry) {
  const int w = std::max(image.width, 1), h = std::max(image.height, 1);
  int canvas_w = p.width, canvas_h = p.height, new_w = p.width, new_h = p.height, off_x = 0, off_y = 0;
  switch (p.fit) {
    case ImagePreprocess::Fit::kResize: break;
    case ImagePreprocess::Fit::kLetterbox: {
      const double r = std::min(static_cast<double>(p.width) / w, static_cast<double>(p.height) / h);
      new_w = std::clamp(static_cast<int>(std::lround(w * r)), 1, p.width);
      new_h = std::clamp(static_cast<int>(std::lround(h * r)), 1, p.height);
      off_x = (p.width - new_w) / 2;
      off_y = (p.height - new_h) / 2;
      break;
    }
    case ImagePreprocess::Fit::kHeight:
      new_h = canvas_h = p.height;
      new_w = std::max(1, static_cast<int>(std::ceil(static_cast<double>(p.height) * w / h)));
      canvas_w = ceil_to(std::max(p.width, new_w), p.multiple);
      break;
    case ImagePreprocess::Fit::kLimit: {
      const double r = std::max(w, h) > p.max_side ? static_cast<double>(p.max_side) / std::max(w, h) : 1.0;
      new_w = canvas_w = round_to(w * r, p.multiple);
      new_h = canvas_h = round_to(h * r, p.multiple);
      break;
    }
  }
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
  t.shape = nchw ? std::vector<std::int64_t>{1, channels, canvas_h, canvas_w} : std::vector<std::int64_t>{1, canvas_h, canvas_w, channels};
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
