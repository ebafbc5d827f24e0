// PP-OCR's steps for one page, after PaddleOCR's inference code for the PP-OCRv4
// detector and recogniser and the mobile v2.0 angle classifier (where rung
// differs, and why, is in the README's table).
#include "pipeline/ocr_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rung {
namespace {

constexpr const char* kInput = "x";       // PaddleOCR's exported models name their image input x
constexpr int kLineHeight = 48;           // the recogniser's and classifier's input height
constexpr int kRecogniserWidth = 320;     // the recogniser's narrowest input (PP-OCRv4's rec_image_shape)
constexpr int kClassifierWidth = 192;     // the classifier's fixed input width (cls_image_shape)
constexpr double kMaxBatchPadding = 0.25; // a batch pads no crop by more than this share of its own width

// Detector input: BGR, ImageNet statistics, the longer side at most 960, sides multiples of 32.
ImagePreprocess detector_input() {
  ImagePreprocess p;
  p.fit = ImagePreprocess::Fit::kLimit;
  p.max_side = 960;
  p.multiple = 32;
  p.channels = "BGR";
  p.mean = {0.485, 0.456, 0.406};
  p.stddev = {0.229, 0.224, 0.225};
  return p;
}

double aspect(const Image& crop) { return static_cast<double>(crop.width) / std::max(crop.height, 1); }

// PaddleOCR's resize_norm_img for the recogniser and the classifier: the crop
// scaled to the line height keeping its aspect (at most `width` wide), BGR,
// (v / 255 - 0.5) / 0.5, and zeros (mid grey) to the right up to `width`.
void put_line(const Image& crop, int width, float* out) {
  const int scaled = std::min(width, static_cast<int>(std::ceil(kLineHeight * aspect(crop))));
  const Image resized = resize_bilinear(crop, std::max(scaled, 1), kLineHeight);
  const auto plane = static_cast<std::size_t>(kLineHeight) * static_cast<std::size_t>(width);
  const auto channels = static_cast<std::size_t>(resized.channels);
  for (std::size_t y = 0; y < static_cast<std::size_t>(kLineHeight); ++y) {
    for (std::size_t x = 0; x < static_cast<std::size_t>(resized.width); ++x) {
      const std::uint8_t* px = resized.pixels.data() + (y * static_cast<std::size_t>(resized.width) + x) * channels;
      for (std::size_t c = 0; c < 3; ++c) {
        const std::uint8_t v = channels >= 3 ? px[2 - c] : px[0];  // BGR
        out[c * plane + y * static_cast<std::size_t>(width) + x] = (static_cast<float>(v) / 255.0f - 0.5f) / 0.5f;
      }
    }
  }
}

Tensor line_batch(const std::vector<Image>& crops, const std::vector<std::size_t>& members, int width) {
  Tensor t;
  t.name = kInput;
  t.type = ElementType::kFloat;
  t.shape = {static_cast<std::int64_t>(members.size()), 3, kLineHeight, width};
  t.bytes.assign(members.size() * 3 * static_cast<std::size_t>(kLineHeight) * static_cast<std::size_t>(width) * sizeof(float), std::byte{0});
  auto* data = reinterpret_cast<float*>(t.bytes.data());
  const std::size_t each = 3 * static_cast<std::size_t>(kLineHeight) * static_cast<std::size_t>(width);
  for (std::size_t k = 0; k < members.size(); ++k) put_line(crops[members[k]], width, data + k * each);
  return t;
}

// The width a crop is run at: its own at the line height, never under the recogniser's narrowest.
double run_ratio(const Image& crop) { return std::max(aspect(crop), static_cast<double>(kRecogniserWidth) / kLineHeight); }

// PaddleOCR's filter_tag_det_res: clipped inside the image, and dropped when 3 pixels or less on a side.
bool keep_clipped(Quad& q, const Image& image) {
  for (auto& p : q) {
    p.x = std::clamp(p.x, 0.0, static_cast<double>(image.width - 1));
    p.y = std::clamp(p.y, 0.0, static_cast<double>(image.height - 1));
  }
  const auto side = [](const Point& a, const Point& b) { return static_cast<int>(std::hypot(a.x - b.x, a.y - b.y)); };
  return side(q[0], q[1]) > 3 && side(q[0], q[3]) > 3;
}

Quad half_turn(const Quad& q) { return {q[2], q[3], q[0], q[1]}; }

// A line's text without the spaces CTC may read into the margins around it.
std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(' ');
  return first == std::string::npos ? std::string{} : s.substr(first, s.find_last_not_of(' ') - first + 1);
}

}  // namespace

std::vector<std::size_t> reading_order(const std::vector<Quad>& boxes) {
  std::vector<std::size_t> order(boxes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Point &p = boxes[a][0], &q = boxes[b][0];
    return p.y < q.y || (p.y == q.y && p.x < q.x);
  });
  // A box whose top is within 10 px of the one before it is on the same line: move it left past those to its right.
  for (std::size_t i = 1; i < order.size(); ++i) {
    for (std::size_t j = i; j > 0; --j) {
      const Point &prev = boxes[order[j - 1]][0], &cur = boxes[order[j]][0];
      if (std::abs(cur.y - prev.y) >= 10 || cur.x >= prev.x) break;
      std::swap(order[j - 1], order[j]);
    }
  }
  return order;
}

std::vector<std::vector<std::size_t>> width_batches(const std::vector<Image>& crops, std::size_t batch, double max_padding) {
  std::vector<std::size_t> order(crops.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return aspect(crops[a]) < aspect(crops[b]); });
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i : order) {
    const bool fits = !groups.empty() && groups.back().size() < std::max<std::size_t>(batch, 1) &&
                      run_ratio(crops[i]) <= (1 + max_padding) * run_ratio(crops[groups.back().front()]);
    if (fits) {
      groups.back().push_back(i);
    } else {
      groups.push_back({i});
    }
  }
  return groups;
}

Result<OcrSteps> OcrSteps::open(core::Job& job, const CharacterList& characters, const PipelineOptions& options) {
  OcrSteps steps(characters, options);
  auto det = job.session(options.detector);
  if (!det) return det.error();
  steps.detector_ = *det;
  if (!options.classifier.empty()) {
    auto cls = job.session(options.classifier);
    if (!cls) return cls.error();
    steps.classifier_ = *cls;
  }
  auto rec = job.session(options.recogniser);
  if (!rec) return rec.error();
  steps.recogniser_ = *rec;
  // Measured on ONNX Runtime's CPU provider: six crops padded to one width cost 40% more than six runs.
  steps.recognise_batch_ = options.recognise_batch > 0 ? options.recognise_batch : job.rung() == "cpu" ? 1 : 6;
  return steps;
}

std::map<std::string, std::string> OcrSteps::rungs() const {
  std::map<std::string, std::string> out;
  for (const core::Session* s : {detector_, classifier_, recogniser_}) {
    if (s != nullptr) out[s->model_name()] = s->rung();
  }
  return out;
}

void OcrSteps::decode(PageWork& page) {
  auto image = read_image(page.file, 3);
  if (!image) {
    page.error = image.error().message;
    return;
  }
  page.image = std::move(*image);
}

void OcrSteps::detect(PageWork& page) const {
  if (!page.error.empty()) return;
  auto out = detector_->run({image_to_tensor(page.image, detector_input(), kInput)});
  if (!out) {
    page.error = out.error().message;
    return;
  }
  const Tensor& map = out->front();  // [1, 1, H, W]
  if (map.shape.size() != 4 || map.type != ElementType::kFloat) {
    page.error = fmt::format("model {}: output has shape {}, expected a float map [1, 1, H, W]", options_->detector, shape_string(map.shape));
    return;
  }
  TextBoxOptions boxes = options_->boxes;
  boxes.output_width = page.image.width;
  boxes.output_height = page.image.height;
  for (const TextBox& box : extract_text_boxes(map.view<float>(), static_cast<std::size_t>(map.shape[2]),
                                               static_cast<std::size_t>(map.shape[3]), boxes)) {
    Quad q = order_quad(box.quad);
    if (keep_clipped(q, page.image)) page.boxes.push_back(q);
  }
}

void OcrSteps::crop(PageWork& page) {
  if (!page.error.empty()) return;
  for (const Quad& q : page.boxes) page.crops.push_back(crop_quad(page.image, q));
  page.turned.assign(page.crops.size(), false);
  page.image = {};  // the stages below need only the crops
}

// The pieces of a crop the classifier sees: a long line squashed into its 192 x 48
// input loses the shapes that tell up from down, so a line more than 1.5 inputs
// long is cut into pieces that each fit without squashing.
std::vector<Image> classifier_views(const Image& crop) {
  const double fits = static_cast<double>(kClassifierWidth) / kLineHeight;
  const auto pieces = static_cast<int>(std::ceil(aspect(crop) / fits));
  if (aspect(crop) <= 1.5 * fits || pieces < 2) return {crop};
  std::vector<Image> out;
  const auto channels = static_cast<std::size_t>(crop.channels);
  for (int k = 0; k < pieces; ++k) {
    const int x0 = crop.width * k / pieces, x1 = crop.width * (k + 1) / pieces;
    Image piece{x1 - x0, crop.height, crop.channels, {}};
    for (int y = 0; y < crop.height; ++y) {
      const auto row = crop.pixels.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(y) * static_cast<std::size_t>(crop.width) + static_cast<std::size_t>(x0)) * channels);
      piece.pixels.insert(piece.pixels.end(), row, row + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(x1 - x0) * channels));
    }
    out.push_back(std::move(piece));
  }
  return out;
}

void OcrSteps::classify(PageWork& page) const {
  if (!page.error.empty() || classifier_ == nullptr) return;
  std::vector<Image> views;
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < page.crops.size(); ++i) {
    for (auto& v : classifier_views(page.crops[i])) {
      views.push_back(std::move(v));
      owner.push_back(i);
    }
  }
  std::vector<double> upside_down(page.crops.size(), 0.0), count(page.crops.size(), 0.0);
  const std::size_t batch = std::max<std::size_t>(options_->classify_batch, 1);
  for (std::size_t begin = 0; begin < views.size(); begin += batch) {
    std::vector<std::size_t> members(std::min(batch, views.size() - begin));
    std::iota(members.begin(), members.end(), begin);
    auto out = classifier_->run({line_batch(views, members, kClassifierWidth)});
    if (!out) {
      page.error = out.error().message;
      return;
    }
    const Tensor& probs = out->front();  // [n, 2]: "0", "180"
    if (!probs.consistent() || *probs.element_count() != members.size() * 2 || probs.type != ElementType::kFloat) {
      page.error = fmt::format("model {}: output has shape {}, expected [{}, 2]", options_->classifier, shape_string(probs.shape), members.size());
      return;
    }
    const auto p = probs.view<float>();
    for (std::size_t k = 0; k < members.size(); ++k) {
      upside_down[owner[members[k]]] += p[2 * k + 1];
      count[owner[members[k]]] += 1;
    }
  }
  // A line the classifier is sure of keeps its verdict; one it is unsure of
  // follows the page's sure lines (a page is mostly turned as a whole).
  const double sure = std::max(options_->turn_threshold, 0.5);
  std::size_t sure_turned = 0, sure_upright = 0;
  for (std::size_t i = 0; i < page.crops.size(); ++i) {
    upside_down[i] /= std::max(count[i], 1.0);
    sure_turned += upside_down[i] > sure ? 1 : 0;
    sure_upright += upside_down[i] < 1 - sure ? 1 : 0;
  }
  for (std::size_t i = 0; i < page.crops.size(); ++i) {
    const double p = upside_down[i];
    const bool turn = p > sure || (p >= 1 - sure && sure_turned > sure_upright);
    if (turn) {
      page.crops[i] = rotate_180(page.crops[i]);
      page.turned[i] = true;
    }
  }
}

void OcrSteps::recognise(PageWork& page) const {
  if (!page.error.empty()) return;
  page.read.assign(page.crops.size(), {});
  for (const auto& members : width_batches(page.crops, recognise_batch_, kMaxBatchPadding)) {
    double widest = 0;
    for (std::size_t i : members) widest = std::max(widest, run_ratio(page.crops[i]));
    auto out = recogniser_->run({line_batch(page.crops, members, static_cast<int>(kLineHeight * widest))});
    if (!out) {
      page.error = out.error().message;
      return;
    }
    const Tensor& scores = out->front();  // [n, steps, classes]
    if (scores.shape.size() != 3 || scores.shape[0] != static_cast<std::int64_t>(members.size()) ||
        scores.shape[2] != static_cast<std::int64_t>(characters_->classes()) || scores.type != ElementType::kFloat) {
      page.error = fmt::format("model {}: output has shape {}, expected [{}, steps, {}] (the character list's classes)",
                               options_->recogniser, shape_string(scores.shape), members.size(), characters_->classes());
      return;
    }
    const auto steps = static_cast<std::size_t>(scores.shape[1]);
    const auto each = steps * characters_->classes();
    for (std::size_t k = 0; k < members.size(); ++k) {
      page.read[members[k]] = ctc_greedy_decode(scores.view<float>().subspan(k * each, each), steps, *characters_);
    }
  }
}

OcrPage OcrSteps::finish(PageWork&& page) const {
  OcrPage out;
  out.index = page.index;
  out.file = std::move(page.file);
  out.error = std::move(page.error);
  if (!out.error.empty()) return out;
  std::size_t turned = 0;
  for (std::size_t i = 0; i < page.read.size(); ++i) {
    std::string text = trimmed(page.read[i].text);
    if (text.empty() || page.read[i].score < options_->drop_score) continue;
    const bool t = page.turned[i];
    out.lines.push_back({t ? half_turn(page.boxes[i]) : page.boxes[i], std::move(text), page.read[i].score, t});
    turned += t ? 1 : 0;
  }
  // A page whose lines were mostly turned is upside down: it reads from the image's bottom right.
  const bool upside_down = 2 * turned > out.lines.size();
  std::vector<Quad> upright;
  for (const auto& l : out.lines) {
    Quad q = l.box;
    if (upside_down) {
      for (auto& p : q) p = {-p.x, -p.y};
    }
    upright.push_back(order_quad(q));
  }
  std::vector<OcrLine> ordered;
  for (std::size_t i : reading_order(upright)) ordered.push_back(std::move(out.lines[i]));
  out.lines = std::move(ordered);
  return out;
}

}  // namespace rung
