// ocr-lines: a batch text index over folders of images, the way an application
// embeds rung. One engine per process; one job per run, so every line it prints
// was produced by the same detector, classifier and recogniser arithmetic, named
// by their model ids. The pages go through rung's pipeline (rung/pipeline.h):
//
//   decode (stb_image, a pool) -> detect (PP-OCRv4 det, DB post-processing)
//   -> crop (perspective warp of each rotated box) -> classify angle (turn upside-down crops)
//   -> recognise (PP-OCRv4 rec, batched by width, CTC) -> write (in input order)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>

#include "numeric_args.h"
#include "parse_error.h"  // and prints its help and parse errors the same way: escaped  // rung's CLI declares its options the same way: every number with its range
#include "progress.h"      // and draws progress the same way: only on a terminal
#include "rung/cpus.h"
#include "rung/decode.h"
#include "rung/engine_core.h"
#include "rung/image.h"
#include "rung/json_text.h"
#include "rung/pipeline.h"
#include "rung/print.h"
#include "rung/runtime.h"
#include "rung/rung_names.h"

namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t interrupted = 0;

struct Settings {
  std::vector<std::string> inputs;
  fs::path models;
  fs::path truth;
  bool wait = false;
  bool json = false;        // one document at the end (schemas/ocr-lines.schema.json)
  bool json_lines = false;  // an object per image as it is read, then the report's
  bool any_json() const { return json || json_lines; }
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

// Usage and input errors exit 2, as rung's own commands do; no runtime 3; the rest 1.
constexpr int kExitFailed = 1, kExitUsage = 2, kExitNoRuntime = 3;

int exit_code_for(rung::ErrorCode code) {
  return code == rung::ErrorCode::kInvalidArgument || code == rung::ErrorCode::kNotFound ? kExitUsage : kExitFailed;
}

// A page's truth beside it in the truth folder: NAME.json (tools/make-text-corpus.py) or NAME.truth.json.
fs::path truth_file(const fs::path& dir, const fs::path& image) {
  const fs::path plain = dir / (image.stem().string() + ".json");
  std::error_code ec;  // a loop of links is "there" (and then damaged), never an exception
  return fs::symlink_status(plain, ec).type() != fs::file_type::not_found ? plain : dir / (image.stem().string() + ".truth.json");
}

// Every page's truth, read before any work: a damaged truth file is an input
// error naming the file and the problem; a page with none is not scored.
struct Truth {
  std::vector<std::optional<std::vector<std::string>>> lines;  // by image index
  std::vector<std::string> missing;                             // by image index: why there is none
};

rung::Result<Truth> read_truth(const fs::path& dir, const std::vector<fs::path>& images) {
  Truth t;
  for (const auto& image : images) {
    auto lines = rung::read_truth_lines(truth_file(dir, image));
    if (!lines && lines.error().code != rung::ErrorCode::kNotFound) return lines.error();
    t.missing.push_back(lines ? "" : fmt::format("{}: no truth file (NAME.json or NAME.truth.json in {}); not scored", image.filename().string(), dir.string()));
    t.lines.push_back(lines ? std::optional(std::move(*lines)) : std::nullopt);
  }
  return t;
}

nlohmann::json quad_json(const rung::Quad& q) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : q) out.push_back({p.x, p.y});
  return out;
}

// A progress bar on stderr, only when it is a terminal.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), on_(rung::cli::progress_on_terminal()) {}
  void step(std::size_t done) const {
    if (!on_) return;
    const std::size_t width = 30, filled = total_ ? width * done / total_ : width;
    rung::cli::show_progress_line(fmt::format("[{}{}] {}/{}", std::string(filled, '#'), std::string(width - filled, ' '), done, total_));
    if (done == total_) rung::print(stderr, "\n");
  }

 private:
  std::size_t total_;
  bool on_;
};

class Writer {
 public:
  Writer(const Settings& s, const Truth& truth, rung::core::Job& job, std::size_t total) : s_(s), truth_(truth), job_(job), progress_(total) {}

  void page(const rung::OcrPage& page) {
    nlohmann::json j{{"image", page.file.string()}};
    if (!page.ok()) {
      ++failures_;
      rung::print(stderr, "ocr-lines: {}\n", page.error);
      j["error"] = page.error;
    } else if (!s_.any_json()) {
      rung::print("{}\n", page.file.filename().string());
      for (const auto& l : page.lines) rung::print("  {}  ({:.2f})\n", l.text, l.confidence);
    }
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : page.lines) lines.push_back({{"text", l.text}, {"confidence", l.confidence}, {"box", quad_json(l.box)}, {"turned", l.turned}});
    j["lines"] = lines;
    j["model_ids"] = job_.model_ids();
    if (!s_.truth.empty() && page.ok()) score(page, j);
    if (s_.json_lines) rung::print("{}\n", rung::json_text(j));
    if (s_.json) pages_.push_back(std::move(j));
    std::fflush(stdout);
    progress_.step(++done_);
  }

  int failures() const { return failures_; }
  const nlohmann::json& pages() const { return pages_; }
  const rung::TextScore& total() const { return total_; }
  std::size_t scored() const { return scored_; }

 private:
  void score(const rung::OcrPage& page, nlohmann::json& j) {
    const auto& truth = truth_.lines.at(page.index);
    if (!truth) {
      rung::print(stderr, "ocr-lines: {}\n", truth_.missing.at(page.index));
      j["truth"] = {{"error", truth_.missing.at(page.index)}};
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
  const Truth& truth_;
  rung::core::Job& job_;
  Progress progress_;
  std::size_t done_ = 0, scored_ = 0;
  int failures_ = 0;
  rung::TextScore total_;
  nlohmann::json pages_ = nlohmann::json::array();  // --json: kept for the one document
};

int run(const Settings& s, rung::core::EngineOptions options) {
  options.models = {{"ppocr_det_v4", rung::Role::kDetector, s.models / "ch_PP-OCRv4_det_infer.onnx", {}, {}, {}},
                    {"ppocr_rec_v4", rung::Role::kGeneric, s.models / "ch_PP-OCRv4_rec_infer.onnx", {}, {}, {}}};
  if (!s.pipeline.classifier.empty()) {
    options.models.push_back({s.pipeline.classifier, rung::Role::kGeneric, s.models / "ch_ppocr_mobile_v2.0_cls_infer.onnx", {}, {}, {}});
  }
  auto files = list_images(s.inputs);
  if (!files) {
    rung::print(stderr, "ocr-lines: {}\n", files.error().message);
    return kExitUsage;
  }
  Truth truth;
  if (!s.truth.empty()) {
    auto read = read_truth(s.truth, *files);
    if (!read) {
      rung::print(stderr, "ocr-lines: --truth: {}\n", read.error().message);
      return kExitUsage;
    }
    truth = std::move(*read);
  }
  auto chars = rung::CharacterList::from_file(s.models / "ppocr_keys_v1.txt");
  if (!chars) {
    rung::print(stderr, "ocr-lines: {}\n", chars.error().message);
    return kExitUsage;
  }
  auto engine = rung::core::Engine::start(options);
  if (!engine) {
    rung::print(stderr, "ocr-lines: {}\n", engine.error().message);
    return engine.error().code == rung::ErrorCode::kInvalidArgument ? kExitUsage : kExitNoRuntime;
  }
  // An application would not wait: its first job runs on the floor while the probe works.
  if (s.wait) (*engine)->wait_until_settled();
  auto job = (*engine)->open_job();
  if (!job) {
    rung::print(stderr, "ocr-lines: {}\n", job.error().message);
    return kExitFailed;
  }
  Writer writer(s, truth, **job, files->size());
  std::stop_source stop;
  rung::PipelineOptions pipeline = s.pipeline;
  pipeline.on_page = [&](const rung::OcrPage& page) {
    writer.page(page);
    if (interrupted) stop.request_stop();
  };
  std::signal(SIGINT, [](int) { interrupted = 1; });
  auto report = rung::run_ocr_pipeline(**job, *chars, *files, pipeline, stop.get_token());
  if (!report) {
    rung::print(stderr, "ocr-lines: {}\n", report.error().message);
    return exit_code_for(report.error().code);
  }
  const rung::TextScore& t = writer.total();
  if (s.any_json()) {
    // The report is JSON rung wrote: placed as it is, never parsed again.
    std::string truth_part;
    if (!s.truth.empty()) {
      const nlohmann::json scored{{"pages", writer.scored()}, {"cer", t.cer()}, {"line_recall", t.recall()}, {"lines", t.truth_lines}, {"found", t.found_lines}};
      truth_part = ",\"truth\":" + rung::json_text(scored);
    }
    if (s.json_lines) {
      rung::print("{{\"report\":{}{}}}\n", report->json(), truth_part);
    } else {
      rung::print("{{\"schema\":\"rung-ocr-lines\",\"schema_version\":1,\"pages\":{},\"report\":{}{}}}\n", rung::json_text(writer.pages()), report->json(),
                  truth_part);
    }
  } else {
    std::vector<std::string> ids;
    for (const auto& [model, id] : report->model_ids) ids.push_back(fmt::format("{}={} on {}", model, id, rung::rung_display_name(report->model_rungs[model])));
    rung::print("models: {}\n", fmt::join(ids, ", "));
    rung::print("{}\n", (*engine)->about_line());
    rung::print("{}", report->table());
    if (!s.truth.empty()) {
      rung::print("truth: {} pages, {} of {} lines found ({:.2f}%), character error rate {:.2f}% (spaces counted)\n", writer.scored(),
                 t.found_lines, t.truth_lines, 100 * t.recall(), 100 * t.cer());
    }
  }
  if (report->cancelled) return kExitFailed;
  return writer.failures() == 0 ? 0 : kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  rung::keep_onnxruntime_telemetry_off_in_this_process();
  using rung::cli::add_number;
  using rung::cli::add_text;
  CLI::App app{"ocr-lines: read the text lines of every image in folders, with the model ids that read them"};
  app.footer("Exit: 0 every image read, 1 an image could not be read, 2 a usage or input error, 3 no usable ONNX Runtime build.");
  Settings s;
  std::string cache_dir, ort_dir;
  std::vector<std::string> plugin_dirs;
  double accept = 1.0;
  bool no_classifier = false;
  add_text(app, "images", s.inputs, "Folders of images, or image files")->required();
  add_text(app, "--models", s.models, "The folder holding the PP-OCR models and ppocr_keys_v1.txt")->required();
  add_text(app, "--cache-dir", cache_dir, "The engine's cache directory")->required();
  add_text(app, "--ort-dir", ort_dir, "Search this directory for ONNX Runtime builds first");
  add_text(app, "--plugin-dir", plugin_dirs, "Plugin EP libraries to try as rungs");
  add_number(app, "--accept-ratio", accept, "Take a rung within this factor of the CPU's speed", {0.01, 10000, "times the CPU's time"})
      ->capture_default_str();
  app.add_flag("--wait", s.wait, "Let the probe report and the engines land before the job opens");
  auto* json = app.add_flag("--json", s.json, "Print one JSON document (schemas/ocr-lines.schema.json): every image's lines, boxes, confidences and "
                                              "model ids, then the run's report");
  app.add_flag("--json-lines", s.json_lines, "Print JSON Lines instead: an object per image as it is read, then the run's report")->excludes(json);
  add_text(app, "--truth", s.truth, "A folder of truth files (NAME.json or NAME.truth.json): character error rate and line recall")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--sequential", s.pipeline.sequential, "Every step on one thread, one image after another");
  app.add_flag("--no-classifier", no_classifier, "Read every line as it stands (no angle classifier)");
  add_number(app, "--unclip-ratio", s.pipeline.boxes.unclip_ratio, "How far a text box grows around its region (PP-OCR's unclip ratio)",
             {0.01, rung::kMaxUnclipRatio})
      ->capture_default_str();
  add_number(app, "--decode-threads", s.pipeline.decode_threads, "Threads decoding images", rung::cli::thread_count_from_one())
      ->capture_default_str();
  add_number(app, "--recognise-batch", s.pipeline.recognise_batch,
             "Crops per recogniser run, similar widths together (0: one on the CPU rung, 6 on an accelerator)", {0, rung::kMaxOcrBatch, "crops"});
  add_number(app, "--recognise-threads", s.pipeline.recognise_threads, "Threads running the recogniser (0: the cores other stages leave)",
             rung::cli::thread_count());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return rung::cli::print_parse_error(app, e) == 0 ? 0 : kExitUsage;  // --help is 0; CLI11's own codes (104, 105, ...) are all usage errors
  }
  if (no_classifier) s.pipeline.classifier.clear();
  rung::core::EngineOptions options;
  options.cache_dir = cache_dir;
  if (!ort_dir.empty()) options.runtimes.explicit_dir = ort_dir;
  for (const auto& d : plugin_dirs) options.plugin_dirs.emplace_back(d);
  options.acceptance_ratio = accept;
  try {
    return run(s, options);
  } catch (const std::exception& e) {
    // rung's library returns its errors; this catches the example's own slips, never an abort.
    rung::print(stderr, "ocr-lines: internal error: {}\n", e.what());
    return kExitFailed;
  }
}
