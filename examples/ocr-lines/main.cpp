// ocr-lines: a batch text index over folders of images, the way an application
// embeds rung. One engine per process; one job per run, so every line it prints
// was produced by the same detector, classifier and recogniser arithmetic, named
// by their model ids. The pages go through rung's pipeline (rung/pipeline.h):
//
//   decode (stb_image, a pool) -> detect (PP-OCRv4 det, DB post-processing)
//   -> crop (perspective warp of each rotated box) -> classify angle (turn upside-down crops)
//   -> recognise (PP-OCRv4 rec, batched by width, CTC) -> write (in input order)
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stop_token>

#include "rung/decode.h"
#include "rung/engine.h"
#include "rung/image.h"
#include "rung/pipeline.h"

namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t interrupted = 0;

struct Settings {
  std::vector<std::string> inputs;
  fs::path models;
  fs::path truth;
  bool wait = false;
  bool json = false;
  rung::PipelineOptions pipeline;
};

// Folders give their images (sorted); files are taken as they are, so a file that is not an image is reported.
rung::Result<std::vector<fs::path>> list_images(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const fs::path in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      if (!fs::exists(in, ec)) return rung::Error{rung::ErrorCode::kNotFound, fmt::format("{}: no such file or folder", in.string())};
      files.push_back(in);
      continue;
    }
    std::vector<fs::path> found;
    for (fs::directory_iterator it(in, ec), end; !ec && it != end; it.increment(ec)) {
      if (rung::is_image_file(it->path())) found.push_back(it->path());
    }
    if (ec || found.empty()) {
      return rung::Error{rung::ErrorCode::kInvalidArgument, fmt::format("{}: {}", in.string(), ec ? ec.message() : "holds no images")};
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// A page's truth beside it in the truth folder: NAME.json (tools/make-text-corpus.py) or NAME.truth.json.
fs::path truth_file(const fs::path& dir, const fs::path& image) {
  const fs::path plain = dir / (image.stem().string() + ".json");
  return fs::exists(plain) ? plain : dir / (image.stem().string() + ".truth.json");
}

nlohmann::json quad_json(const rung::Quad& q) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : q) out.push_back({p.x, p.y});
  return out;
}

// A progress bar on stderr, only when it is a terminal.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), on_(isatty(STDERR_FILENO) == 1) {}
  void step(std::size_t done) const {
    if (!on_) return;
    const std::size_t width = 30, filled = total_ ? width * done / total_ : width;
    fmt::print(stderr, "\r[{}{}] {}/{}", std::string(filled, '#'), std::string(width - filled, ' '), done, total_);
    if (done == total_) fmt::print(stderr, "\n");
  }

 private:
  std::size_t total_;
  bool on_;
};

class Writer {
 public:
  Writer(const Settings& s, rung::Job& job, std::size_t total) : s_(s), job_(job), progress_(total) {}

  void page(const rung::OcrPage& page) {
    nlohmann::json j{{"image", page.file.string()}};
    if (!page.ok()) {
      ++failures_;
      fmt::print(stderr, "ocr-lines: {}\n", page.error);
      j["error"] = page.error;
    } else if (!s_.json) {
      fmt::print("{}\n", page.file.filename().string());
      for (const auto& l : page.lines) fmt::print("  {}  ({:.2f})\n", l.text, l.confidence);
    }
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : page.lines) lines.push_back({{"text", l.text}, {"confidence", l.confidence}, {"box", quad_json(l.box)}, {"turned", l.turned}});
    j["lines"] = lines;
    j["model_ids"] = job_.model_ids();
    if (!s_.truth.empty() && page.ok()) score(page, j);
    if (s_.json) fmt::print("{}\n", j.dump());
    std::fflush(stdout);
    progress_.step(++done_);
  }

  int failures() const { return failures_; }
  const rung::TextScore& total() const { return total_; }
  std::size_t scored() const { return scored_; }

 private:
  void score(const rung::OcrPage& page, nlohmann::json& j) {
    auto truth = rung::read_truth_lines(truth_file(s_.truth, page.file));
    if (!truth) {
      fmt::print(stderr, "ocr-lines: {}\n", truth.error().message);
      j["truth"] = {{"error", truth.error().message}};
      return;
    }
    std::vector<std::string> read;
    for (const auto& l : page.lines) read.push_back(l.text);
    const rung::TextScore s = rung::score_lines(read, *truth);
    total_ += s;
    ++scored_;
    j["truth"] = {{"cer", s.cer()}, {"line_recall", s.recall()}, {"lines", s.truth_lines}, {"found", s.found_lines}};
  }

  const Settings& s_;
  rung::Job& job_;
  Progress progress_;
  std::size_t done_ = 0, scored_ = 0;
  int failures_ = 0;
  rung::TextScore total_;
};

int run(const Settings& s, rung::EngineOptions options) {
  options.models = {{"ppocr_det_v4", rung::Role::kDetector, s.models / "ch_PP-OCRv4_det_infer.onnx", {}, {}, {}},
                    {"ppocr_rec_v4", rung::Role::kGeneric, s.models / "ch_PP-OCRv4_rec_infer.onnx", {}, {}, {}}};
  if (!s.pipeline.classifier.empty()) {
    options.models.push_back({s.pipeline.classifier, rung::Role::kGeneric, s.models / "ch_ppocr_mobile_v2.0_cls_infer.onnx", {}, {}, {}});
  }
  auto files = list_images(s.inputs);
  if (!files) {
    fmt::print(stderr, "ocr-lines: {}\n", files.error().message);
    return 2;
  }
  auto chars = rung::CharacterList::from_file(s.models / "ppocr_keys_v1.txt");
  if (!chars) {
    fmt::print(stderr, "ocr-lines: {}\n", chars.error().message);
    return 2;
  }
  auto engine = rung::Engine::start(options);
  if (!engine) {
    fmt::print(stderr, "ocr-lines: {}\n", engine.error().message);
    return 3;
  }
  // An application would not wait: its first job runs on the floor while the probe works.
  if (s.wait) (*engine)->wait_until_settled();
  auto job = (*engine)->open_job();
  if (!job) {
    fmt::print(stderr, "ocr-lines: {}\n", job.error().message);
    return 1;
  }
  Writer writer(s, **job, files->size());
  std::stop_source stop;
  rung::PipelineOptions pipeline = s.pipeline;
  pipeline.on_page = [&](const rung::OcrPage& page) {
    writer.page(page);
    if (interrupted) stop.request_stop();
  };
  std::signal(SIGINT, [](int) { interrupted = 1; });
  auto report = rung::run_ocr_pipeline(**job, *chars, *files, pipeline, stop.get_token());
  if (!report) {
    fmt::print(stderr, "ocr-lines: {}\n", report.error().message);
    return 1;
  }
  const rung::TextScore& t = writer.total();
  if (s.json) {
    nlohmann::json summary{{"report", nlohmann::json::parse(report->json())}};
    if (!s.truth.empty()) summary["truth"] = {{"pages", writer.scored()}, {"cer", t.cer()}, {"line_recall", t.recall()}, {"lines", t.truth_lines}, {"found", t.found_lines}};
    fmt::print("{}\n", summary.dump());
  } else {
    std::vector<std::string> ids;
    for (const auto& [model, id] : report->model_ids) ids.push_back(fmt::format("{}={} on {}", model, id, report->model_rungs[model]));
    fmt::print("models: {}\n", fmt::join(ids, ", "));
    fmt::print("{}\n", (*engine)->about_line());
    fmt::print("{}", report->table());
    if (!s.truth.empty()) {
      fmt::print("truth: {} pages, {} of {} lines found ({:.2f}%), character error rate {:.2f}% (spaces counted)\n", writer.scored(),
                 t.found_lines, t.truth_lines, 100 * t.recall(), 100 * t.cer());
    }
  }
  if (report->cancelled) return 1;
  return writer.failures() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ocr-lines: read the text lines of every image in folders, with the model ids that read them"};
  Settings s;
  std::string cache_dir, ort_dir;
  std::vector<std::string> plugin_dirs;
  double accept = 1.0;
  bool no_classifier = false;
  app.add_option("images", s.inputs, "Folders of images, or image files")->required();
  app.add_option("--models", s.models, "The folder holding the PP-OCR models and ppocr_keys_v1.txt")->required();
  app.add_option("--cache-dir", cache_dir, "The engine's cache directory")->required();
  app.add_option("--ort-dir", ort_dir, "Search this directory for ONNX Runtime builds first");
  app.add_option("--plugin-dir", plugin_dirs, "Plugin EP libraries to try as rungs");
  app.add_option("--accept-ratio", accept, "Take a rung within this factor of the CPU's speed");
  app.add_flag("--wait", s.wait, "Let the probe report and the engines land before the job opens");
  app.add_flag("--json", s.json, "One JSON object per image (lines, boxes, confidences, model ids), then the run's report");
  app.add_option("--truth", s.truth, "A folder of truth files (NAME.json or NAME.truth.json): character error rate and line recall")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--sequential", s.pipeline.sequential, "Every step on one thread, one image after another");
  app.add_flag("--no-classifier", no_classifier, "Read every line as it stands (no angle classifier)");
  app.add_option("--unclip-ratio", s.pipeline.boxes.unclip_ratio, "How far a text box grows around its region (PP-OCR's unclip ratio)")
      ->check(CLI::PositiveNumber);
  app.add_option("--decode-threads", s.pipeline.decode_threads, "Threads decoding images")->check(CLI::PositiveNumber);
  app.add_option("--recognise-batch", s.pipeline.recognise_batch,
                 "Crops per recogniser run, similar widths together (0: one on the CPU rung, 6 on an accelerator)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--recognise-threads", s.pipeline.recognise_threads, "Threads running the recogniser (0: the cores other stages leave)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  if (no_classifier) s.pipeline.classifier.clear();
  rung::EngineOptions options;
  options.cache_dir = cache_dir;
  if (!ort_dir.empty()) options.runtimes.explicit_dir = ort_dir;
  for (const auto& d : plugin_dirs) options.plugin_dirs.emplace_back(d);
  options.acceptance_ratio = accept;
  return run(s, options);
}
