// A batch text index as an application runs it: pages decoded by a pool of
// threads, then detect, crop, classify angle, recognise and write, each stage on
// its own thread(s), joined by bounded queues (memory stays flat on any number of
// pages). The inference stages run on one Job's sessions, so every page of a run
// is read by the same models (the same model ids). An image that fails is
// reported for itself; the run goes on. The report says where the time went.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "rung/decode.h"
#include "rung/engine_core.h"
#include "rung/geometry.h"
#include "rung/result.h"

namespace rung {

struct OcrLine {
  Quad box;               // source pixels, clockwise from the text's own top-left corner
  std::string text;       // UTF-8
  double confidence = 0;  // the recogniser's (mean of the kept CTC steps' maxima)
  bool turned = false;    // the angle classifier read it upside down and it was turned
};

struct OcrPage {
  std::size_t index = 0;  // its place in the list the run was given
  std::filesystem::path file;
  std::vector<OcrLine> lines;  // reading order: top to bottom, left to right, of the upright page
  std::string error;           // why this image could not be read; "" when it was
  bool ok() const { return error.empty(); }
};

// The largest batch (and queue) a run takes: a batch is padded to its widest
// crop and held whole in memory.
inline constexpr std::size_t kMaxOcrBatch = 256;
// Past this a text box grows over its neighbours (PP-OCR uses 1.5 to 2).
inline constexpr double kMaxUnclipRatio = 10;

// Checked by run_ocr_pipeline before any thread starts: thread counts 0 to the
// CPUs this process may use (rung/cpus.h), batches and the queue depth up to
// kMaxOcrBatch, the unclip ratio above 0 up to kMaxUnclipRatio, thresholds 0 to 1.
struct PipelineOptions {
  // Model names registered with the engine; an empty classifier reads every line as it stands.
  std::string detector = "ppocr_det_v4";
  std::string classifier = "ppocr_cls";
  std::string recogniser = "ppocr_rec_v4";
  int decode_threads = 2;
  // Threads running the recogniser at once on its one session (the heaviest
  // step by far); 0: one per core.
  int recognise_threads = 0;
  std::size_t queue_depth = 2;       // pages waiting between two stages
  // Crops per recogniser run, similar widths together; 0: one on the CPU rung
  // (batching costs more there than it saves), PP-OCR's 6 on an accelerator.
  std::size_t recognise_batch = 0;
  std::size_t classify_batch = 6;
  // PP-OCR's DB post-processing, scored inside each region's contour and grown
  // by DBPostProcess's own default 2.0 (the inference tool's 1.5 loses spaces).
  TextBoxOptions boxes{.unclip_ratio = 2.0, .contour_score = true};
  double turn_threshold = 0.9;       // a line read as "180" at least this sure is turned; an unsure one follows its page
  double drop_score = 0.5;           // lines read with less confidence are dropped (PP-OCR's)
  bool sequential = false;           // every step on the calling thread, one page after another
  // The write stage: every page once, in the order given, from one thread.
  std::function<void(const OcrPage&)> on_page;
};

struct StageReport {
  std::string name;
  int threads = 0;
  std::size_t items = 0;
  double busy_s = 0;      // working, summed over its threads
  double cpu_s = 0;       // CPU time those threads spent working
  double waiting_s = 0;   // waiting for input
  double blocked_s = 0;   // waiting for room downstream (back-pressure)
  double utilisation = 0; // busy / (wall-clock x threads)
};

struct PipelineReport {
  std::string rung;                               // the job's
  std::map<std::string, std::string> model_ids;   // model name -> model id, fixed for the run
  std::map<std::string, std::string> model_rungs; // model name -> the rung its session runs on
  bool sequential = false;
  bool cancelled = false;
  std::size_t pages = 0;   // written
  std::size_t failed = 0;  // of those, pages with an error
  double wall_s = 0;
  double pages_per_second = 0;
  std::vector<StageReport> stages;
  std::string bottleneck;  // the stage with the highest utilisation
  double bottleneck_utilisation = 0;

  std::string table() const;  // one line per stage and a summary, for a terminal
  std::string json() const;   // the same as one JSON object
};

// Opens the job's sessions for the three models, then reads every image. The
// error is for what stops the whole run (a model that cannot be opened); a page
// that fails is an OcrPage with its error; options out of their ranges (see
// PipelineOptions) are kInvalidArgument before anything runs. `stop` cancels:
// the stages finish the page in hand, every thread is joined, and the report says `cancelled`.
Result<PipelineReport> run_ocr_pipeline(core::Job& job, const CharacterList& characters,
                                        const std::vector<std::filesystem::path>& images, const PipelineOptions& options,
                                        std::stop_token stop = {});

// ---- Ground truth ----

// A page's truth: {"lines": [{"text": "..."}, ...]} (tools/make-text-corpus.py
// writes these; other keys are the writer's own). Read as a document (a
// regular file, its size and nesting bounded); a file that is not there is
// kNotFound, one that is damaged (not a regular file, too large, not JSON, a
// value of the wrong kind, more than kMaxTruthLines lines) kInvalidArgument
// naming the file and the key.
inline constexpr std::size_t kMaxTruthLines = 100'000;
Result<std::vector<std::string>> read_truth_lines(const std::filesystem::path& file);

struct TextScore {
  std::size_t truth_lines = 0;
  std::size_t found_lines = 0;  // truth lines matched by a line read with CER <= 0.25
  std::size_t truth_chars = 0;  // code points, spaces counted
  std::size_t edits = 0;        // over matched pairs, plus every character of unmatched lines on both sides
  double recall() const { return truth_lines ? static_cast<double>(found_lines) / static_cast<double>(truth_lines) : 1.0; }
  double cer() const { return truth_chars ? static_cast<double>(edits) / static_cast<double>(truth_chars) : 0.0; }
  TextScore& operator+=(const TextScore& other);
};

// Matches read lines to truth lines one to one, by the smallest character error
// rate first, so a page read in another order loses nothing here. Full-width
// forms read (PP-OCR's character list has "，" beside ",") count as their ASCII
// characters, as Unicode's compatibility folding has them.
TextScore score_lines(const std::vector<std::string>& read, const std::vector<std::string>& truth);

}  // namespace rung
