// Images as a model input: decoded by stb_image (Debian's libstb), cropped,
// resized, then normalised and laid out as a tensor by a declared preprocessing.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rung/geometry.h"
#include "rung/result.h"
#include "rung/tensor.h"

namespace rung {

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;                   // 1 (grey), 3 (RGB) or 4 (RGBA)
  std::vector<std::uint8_t> pixels;   // rows top to bottom, channels interleaved
};

// Any format stb_image reads (PNG, JPEG, BMP, GIF, TGA, PNM, PSD, HDR), converted
// to `channels`. An Error names the file and stb_image's reason. The header is
// read first: an image of more than `max_bytes` decoded (or a file larger than
// that) is refused before it is decoded.
Result<Image> read_image(const std::filesystem::path& path, int channels = 3, std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// The same from the file's bytes; `where` names it in errors.
Result<Image> decode_image(std::string_view bytes, const std::string& where, int channels = 3,
                           std::uint64_t max_bytes = kDefaultMaxTensorBytes);
// Whether a file name has an extension read_image takes.
bool is_image_file(const std::filesystem::path& path);
Status write_png(const Image& image, const std::filesystem::path& path);

// Bilinear, sampling at pixel centres (as OpenCV's INTER_LINEAR does when enlarging).
Image resize_bilinear(const Image& src, int width, int height);
// The quad's content warped upright to its own width x height (PP-OCR's
// get_rotate_crop_image: a perspective warp, bicubic, edges replicated): a crop
// at least 1.5 times taller than wide is turned 90 degrees, because a text line
// is wider than tall.
Image crop_quad(const Image& src, const Quad& quad);
// Turned half a turn (a text line the angle classifier reads upside down).
Image rotate_180(const Image& src);

// How an image becomes a model's input tensor.
struct ImagePreprocess {
  enum class Fit {
    kResize,     // stretch to width x height
    kLetterbox,  // scale to fit width x height keeping the aspect ratio, centred, pad the rest
    kHeight,     // scale to `height` keeping the aspect ratio; pad the right up to `width` (a minimum)
    kLimit,      // scale down so the longer side is at most `max_side`, then round each side to `multiple`
  };
  Fit fit = Fit::kResize;
  int width = 0;
  int height = 0;
  int max_side = 960;
  int multiple = 1;                        // the final width and height are multiples of this (kLimit, kHeight)
  double pad = 0;                          // padding, in pixel units (0..255) before normalisation
  std::string channels = "RGB";            // "RGB", "BGR" or "GRAY"
  double scale = 1.0 / 255.0;              // value = (pixel * scale - mean) / stddev, per channel
  std::array<double, 3> mean{0, 0, 0};
  std::array<double, 3> stddev{1, 1, 1};   // "std" in JSON
  std::string layout = "NCHW";             // or "NHWC"
  ElementType type = ElementType::kFloat;  // kFloat, or kUint8 (raw pixels, no normalisation)

  // {"fit": "limit", "max_side": 960, "multiple": 32, "channels": "BGR", "mean": [...], "std": [...], ...}
  static Result<ImagePreprocess> from_json_text(const std::string& text);
  std::string to_json_text() const;
};

// Where the tensor's pixels came from: source = (tensor - offset) / scale.
struct ImageGeometry {
  double scale_x = 1, scale_y = 1;
  double offset_x = 0, offset_y = 0;
  int source_width = 0, source_height = 0;
  Point to_source(Point p) const { return {(p.x - offset_x) / scale_x, (p.y - offset_y) / scale_y}; }
};

// The widest or tallest image or canvas rung makes, in pixels.
inline constexpr int kMaxImageSide = 1 << 16;

// The shape image_to_tensor gives an image of this size, or why it would be too
// large: a side beyond kMaxImageSide, or more than `max_bytes`; `what` names it.
Result<std::vector<std::int64_t>> image_tensor_shape(int image_width, int image_height, const ImagePreprocess& preprocess,
                                                     const std::string& what, std::uint64_t max_bytes = kDefaultMaxTensorBytes);

// The image as a [1, C, H, W] (or [1, H, W, C]) tensor named `name`. Check its
// size first with image_tensor_shape when the image or preprocessing comes from outside.
Tensor image_to_tensor(const Image& image, const ImagePreprocess& preprocess, const std::string& name,
                       ImageGeometry* geometry = nullptr);

}  // namespace rung
