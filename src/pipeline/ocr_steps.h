// The work each stage does to one page, PP-OCR's way (PaddleOCR's TextSystem
// with its inference defaults): the same steps serve the threaded pipeline and
// the sequential loop it is measured against.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <vector>

#include "rung/decode.h"
#include "rung/engine_core.h"
#include "rung/image.h"
#include "rung/pipeline.h"

namespace rung {

// One page on its way through the stages; what a step needs is filled by the one before.
struct PageWork {
  std::size_t index = 0;
  std::filesystem::path file;
  Image image;
  std::vector<Quad> boxes;   // source pixels, as the detector found them
  std::vector<Image> crops;  // one per box, upright
  std::vector<bool> turned;  // per crop: the classifier turned it
  std::vector<TextLine> read;
  std::string error;         // set by the first step that fails; later steps pass the page on
};

class OcrSteps {
 public:
  // Opens the job's three sessions (so the run's model ids are fixed before the first page).
  static Result<OcrSteps> open(core::Job& job, const CharacterList& characters, const PipelineOptions& options);

  static void decode(PageWork& page);
  void detect(PageWork& page) const;
  static void crop(PageWork& page);
  void classify(PageWork& page) const;
  void recognise(PageWork& page) const;
  OcrPage finish(PageWork&& page) const;
  // Model name -> the rung its session runs on.
  std::map<std::string, std::string> rungs() const;

 private:
  OcrSteps(const CharacterList& characters, const PipelineOptions& options) : characters_(&characters), options_(&options) {}

  const CharacterList* characters_;
  const PipelineOptions* options_;
  core::Session* detector_ = nullptr;
  core::Session* classifier_ = nullptr;  // null: no angle classifier
  core::Session* recogniser_ = nullptr;
  std::size_t recognise_batch_ = 1;
};

// PP-OCR's sorted_boxes: by the top-left corner's y, then x; boxes whose tops
// are within 10 pixels are one line, read left to right. Returns the order.
std::vector<std::size_t> reading_order(const std::vector<Quad>& boxes);

// Groups of crop indices for one batched run each: sorted by aspect ratio (as
// PP-OCR batches), at most `batch` per group, and a crop joins a group only when
// the group's padded width stays within `max_padding` of its own (where batching
// pays rather than running padding).
std::vector<std::vector<std::size_t>> width_batches(const std::vector<Image>& crops, std::size_t batch, double max_padding);

}  // namespace rung
