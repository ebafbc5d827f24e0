// Decoders: a model's outputs turned into what a product decides with them.
// The parity gates compare these decisions; an OCR application uses the same
// CTC decoding and text-box extraction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rung/geometry.h"
#include "rung/result.h"

namespace rung {

// ---- Text: CTC greedy decoding (PP-OCR recognisers) ----

// The classes of a CTC recogniser: class 0 is the blank, then one symbol per
// line of a character list (PP-OCR's ppocr_keys_v1.txt), then " " when
// `append_space` (PaddleOCR's use_space_char, on for its Chinese models).
class CharacterList {
 public:
  static Result<CharacterList> from_file(const std::filesystem::path& file, bool append_space = true);
  static CharacterList from_symbols(std::vector<std::string> symbols, bool append_space = true);
  std::size_t classes() const { return symbols_.size() + 1; }
  const std::string& symbol(std::size_t cls) const { return symbols_[cls - 1]; }  // cls in [1, classes())

 private:
  std::vector<std::string> symbols_;
};

struct TextLine {
  std::string text;      // UTF-8
  double score = 0;      // mean of the kept steps' maxima (PaddleOCR's line confidence); 0 when empty
};

// Argmax per step, repeats collapsed, blanks dropped. `scores` is [steps, classes]
// row-major with classes == chars.classes().
TextLine ctc_greedy_decode(std::span<const float> scores, std::size_t steps, const CharacterList& chars);

std::size_t code_points(std::string_view utf8);
// Levenshtein distance counted in code points, so one Chinese character is one edit.
std::size_t edit_distance(std::string_view a, std::string_view b);

// ---- Text boxes from a probability map (PP-OCR's DB post-processing) ----

struct TextBoxOptions {
  double threshold = 0.3;       // a pixel is text above this probability
  double box_threshold = 0.6;   // a region is kept when its mean probability reaches this
  double unclip_ratio = 1.5;    // the region's rectangle grows by area * ratio / perimeter on every side
  double min_size = 3;          // short side (pixels) below which a region is dropped
  std::size_t max_candidates = 1000;
  // Score by the mean inside the region's contour (PP-OCR's score_mode "slow")
  // rather than inside its rectangle ("fast"): a curved line keeps its score.
  bool contour_score = false;
  // The boxes' coordinates: the map's own when 0, else scaled to this size (the
  // source image's, rounded there as PP-OCR does) before rounding.
  double output_width = 0;
  double output_height = 0;
};

struct TextBox {
  Quad quad;        // map coordinates, clockwise from the top-left corner
  double score = 0; // mean probability inside the rectangle before it grew
};

// PaddleOCR's DBPostProcess: thresholds the map, follows every border of the
// binary map (outer and hole ones, as OpenCV's findContours with RETR_LIST),
// fits each border's minimum-area rectangle, scores it by the map's mean inside
// it, grows it by area * unclip_ratio / perimeter on every side (for a rectangle
// the minimum-area rectangle of PP-OCR's rounded polygon offset), and keeps it
// when large and confident enough. Boxes come in the order their borders are met.
std::vector<TextBox> extract_text_boxes(std::span<const float> probability, std::size_t height, std::size_t width,
                                        const TextBoxOptions& options = {});

// ---- Matching detections between two runs ----

struct BoxMatch {
  std::vector<std::pair<std::size_t, std::size_t>> matched;  // (reference index, candidate index)
  std::vector<double> iou;                                   // per matched pair
  std::vector<std::size_t> ref_only;                         // lost by the candidate
  std::vector<std::size_t> cand_only;                        // found only by the candidate
};

// One-to-one, greedily by decreasing IoU, pairs below `min_iou` never matched.
BoxMatch match_by_iou(const std::vector<Quad>& reference, const std::vector<Quad>& candidate, double min_iou);

// ---- Scores, classes, vectors and masks ----

enum class Activation { kNone, kSigmoid, kSoftmax };
Result<Activation> activation_from_name(std::string_view name);  // "none", "sigmoid", "softmax"
const char* activation_name(Activation a);
std::vector<double> activate(std::span<const double> logits, Activation activation);

// The k highest scores' indices, best first; ties go to the lower index.
std::vector<std::size_t> top_k(std::span<const double> scores, std::size_t k);

// Cosine similarity; 1 when both are zero vectors, 0 when only one is.
double cosine_similarity(std::span<const double> a, std::span<const double> b);

// Intersection over union of two binary masks (nonzero = on) of equal size; 1 when both are empty.
double mask_iou(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

}  // namespace rung
