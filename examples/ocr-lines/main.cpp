// ocr-lines: a text-line pipeline over a folder of images, the way an
// application embeds rung. One engine per process; one job per run over the
// folder, so every line it prints was produced by the same detector and
// recogniser arithmetic, named by their model ids.
//
//   decode (stb_image) -> detect (PP-OCRv4 det, DB probability map -> text boxes)
//   -> crop each box upright -> recognise (PP-OCRv4 rec, CTC greedy) -> print
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>

#include "rung/decode.h"
#include "rung/engine.h"
#include "rung/image.h"

namespace fs = std::filesystem;

namespace {

// PaddleOCR's settings for these two models: images read as BGR, ImageNet
// statistics for the detector, [-1, 1] for the recogniser, height 48.
rung::ImagePreprocess detector_input() {
  rung::ImagePreprocess p;
  p.fit = rung::ImagePreprocess::Fit::kLimit;
  p.max_side = 960;
  p.multiple = 32;
  p.channels = "BGR";
  p.mean = {0.485, 0.456, 0.406};
  p.stddev = {0.229, 0.224, 0.225};
  return p;
}

rung::ImagePreprocess recogniser_input() {
  rung::ImagePreprocess p;
  p.fit = rung::ImagePreprocess::Fit::kHeight;
  p.height = 48;
  p.width = 320;  // a minimum: wider lines keep their aspect ratio
  p.channels = "BGR";
  p.mean = {0.5, 0.5, 0.5};
  p.stddev = {0.5, 0.5, 0.5};
  return p;
}

struct Line {
  rung::Quad quad;
  rung::TextLine text;
};

int run(const fs::path& images, const fs::path& models, rung::EngineOptions options, bool wait) {
  options.models = {{"ppocr_det_v4", rung::Role::kDetector, models / "ch_PP-OCRv4_det_infer.onnx", {}, {}, {}},
                    {"ppocr_rec_v4", rung::Role::kGeneric, models / "ch_PP-OCRv4_rec_infer.onnx", {}, {}, {}}};
  auto chars = rung::CharacterList::from_file(models / "ppocr_keys_v1.txt");
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
  if (wait) (*engine)->wait_until_settled();
  auto job = (*engine)->open_job();
  if (!job) {
    fmt::print(stderr, "ocr-lines: {}\n", job.error().message);
    return 1;
  }
  auto det = (*job)->session("ppocr_det_v4");
  auto rec = (*job)->session("ppocr_rec_v4");
  if (!det || !rec) {
    fmt::print(stderr, "ocr-lines: {}\n", (!det ? det.error() : rec.error()).message);
    return 1;
  }

  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(images, ec), end; !ec && it != end; it.increment(ec)) {
    if (rung::is_image_file(it->path())) files.push_back(it->path());
  }
  if (ec || files.empty()) {
    fmt::print(stderr, "ocr-lines: {}: {}\n", images.string(), ec ? ec.message() : "holds no images");
    return 2;
  }
  std::sort(files.begin(), files.end());

  int failures = 0;
  for (const auto& file : files) {
    auto image = rung::read_image(file, 3);
    if (!image) {
      fmt::print(stderr, "ocr-lines: {}\n", image.error().message);
      ++failures;
      continue;
    }
    rung::ImageGeometry geometry;
    auto map = (*det)->run({rung::image_to_tensor(*image, detector_input(), "x", &geometry)});
    if (!map) {
      fmt::print(stderr, "ocr-lines: {}: {}\n", file.string(), map.error().message);
      ++failures;
      continue;
    }
    const rung::Tensor& prob = (*map)[0];  // [1, 1, H, W]
    auto height = static_cast<std::size_t>(prob.shape[2]), width = static_cast<std::size_t>(prob.shape[3]);
    std::vector<Line> lines;
    for (const auto& box : rung::extract_text_boxes(prob.view<float>(), height, width)) {
      rung::Quad quad;
      for (std::size_t i = 0; i < 4; ++i) quad[i] = geometry.to_source(box.quad[i]);
      auto out = (*rec)->run({rung::image_to_tensor(rung::crop_quad(*image, quad), recogniser_input(), "x")});
      if (!out) {
        fmt::print(stderr, "ocr-lines: {}: {}\n", file.string(), out.error().message);
        ++failures;
        continue;
      }
      const rung::Tensor& scores = (*out)[0];  // [1, steps, classes]
      lines.push_back({quad, rung::ctc_greedy_decode(scores.view<float>(), static_cast<std::size_t>(scores.shape[1]), *chars)});
    }
    // Reading order: top to bottom, then left to right within a line's height.
    std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
      if (std::abs(a.quad[0].y - b.quad[0].y) > 10) return a.quad[0].y < b.quad[0].y;
      return a.quad[0].x < b.quad[0].x;
    });
    fmt::print("{}\n", file.filename().string());
    for (const auto& l : lines) {
      if (!l.text.text.empty()) fmt::print("  {}  ({:.2f})\n", l.text.text, l.text.score);
    }
  }
  std::string ids;
  for (const auto& [model, id] : (*job)->model_ids()) ids += fmt::format(" {}={}", model, id);
  fmt::print("models:{} · detector on {}, recogniser on {}\n", ids, (*det)->rung(), (*rec)->rung());
  fmt::print("{}\n", (*engine)->about_line());
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ocr-lines: print the text lines of every image in a folder, with the model ids that read them"};
  std::string images, models, cache_dir, ort_dir;
  std::vector<std::string> plugin_dirs;
  bool wait = false;
  double accept = 1.0;
  app.add_option("images", images, "A folder of images")->required();
  app.add_option("--models", models, "The folder holding the PP-OCRv4 models and ppocr_keys_v1.txt")->required();
  app.add_option("--cache-dir", cache_dir, "The engine's cache directory")->required();
  app.add_option("--ort-dir", ort_dir, "Search this directory for ONNX Runtime builds first");
  app.add_option("--plugin-dir", plugin_dirs, "Plugin EP libraries to try as rungs");
  app.add_option("--accept-ratio", accept, "Take a rung within this factor of the CPU's speed");
  app.add_flag("--wait", wait, "Let the probe report and the engines land before the job opens");
  CLI11_PARSE(app, argc, argv);
  rung::EngineOptions options;
  options.cache_dir = cache_dir;
  if (!ort_dir.empty()) options.runtimes.explicit_dir = ort_dir;
  for (const auto& d : plugin_dirs) options.plugin_dirs.emplace_back(d);
  options.acceptance_ratio = accept;
  return run(images, models, options, wait);
}
