// The batch text index end to end (decode included), as issue M4 asks: on the
// CPU floor and on the chosen rung (the simulated accelerator), the pipeline
// against a sequential loop over the same pages with the same sessions, where
// the time went, whether memory stays flat, and how well the pages were read.
// Every figure is a ratio or a count measured in this one run.
//
//   pipeline-bench [--pages 200] [--corpus DIR] [--plugin-dir DIR] [--only floor|chosen] [--json FILE]
//
// The corpus is tools/make-text-corpus.py's set "pages" (rendered once, then
// kept in DIR, default $RUNG_DEPS_DIR/corpus, outside the work tree).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "numeric_args.h"
#include "rung/ratio_text.h"
#include "os/atomic_file.h"
#include "os/child_process.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "os/this_process.h"
#include "rung/pipeline.h"

namespace fs = std::filesystem;

namespace {

const fs::path kScan = "/usr/lib/python3/dist-packages/skimage/data/page.png";

struct Page {
  fs::path image;
  std::vector<std::string> truth;
  bool turned = false;
};

// Renders the set once; a kept set with enough pages is reused.
std::vector<Page> corpus(const fs::path& dir, std::size_t pages) {
  const fs::path set = dir / "pages";
  auto read_manifest = [&] {
    auto j = rung::read_json_file(set / "manifest.json");
    return j && j->is_object() && j->contains("pages") && (*j)["pages"].is_array() ? std::move(*j) : nlohmann::json::object({{"pages", nlohmann::json::array()}});
  };
  auto manifest = read_manifest();
  if (manifest["pages"].size() < pages) {
    const std::string cmd = fmt::format("python3 '{}' --out '{}' --set pages --pages {}", RUNG_BENCH_CORPUS_SCRIPT, dir.string(), pages);
    fmt::print(stderr, "rendering the corpus: {}\n", cmd);
    const fs::path log = dir / "render.log";
    auto child = rung::ChildProcess::spawn(RUNG_BENCH_CORPUS_SCRIPT, {"--out", dir.string(), "--set", "pages", "--pages", std::to_string(pages)}, log);
    if (!child) return {};
    const auto ended = child->wait(rung::ChildProcess::Clock::time_point::max());
    if (ended.exit_code != 0) {
      fmt::print(stderr, "the corpus script failed; its output is in {}\n", log.string());
      return {};
    }
    manifest = read_manifest();
  }
  std::vector<Page> out;
  for (const auto& p : manifest["pages"]) {
    if (out.size() == pages) break;
    const fs::path image = set / p["image"].get<std::string>();
    auto truth = rung::read_truth_lines(fs::path(image).replace_extension(".json"));
    if (!truth) return {};
    out.push_back({image, *truth, p["rotation"] == 180});
  }
  return out;
}

// Peak resident memory since the last reset (os/this_process.h says how each system keeps it).
void reset_peak_rss() { rung::reset_resident_high_water(); }
double peak_rss_mib() { return rung::resident_high_water_kib() / 1024.0; }

// The machine's 1-minute load average: the figures mean little when other work shares the cores.
double load_average() { return rung::load_average_one_minute().value_or(0); }

struct Accuracy {
  rung::TextScore all, upright, turned;
};

// The short run whose peak memory the whole run is held against.
constexpr std::size_t kFewPages = 20;

struct RungRun {
  rung::PipelineReport sequential, pipelined;
  double rss_few = 0, rss_half = 0, rss_all = 0;  // MiB, pipelined over kFewPages pages, at half the run, and over all
  double load_before = 0, load_after = 0;
  Accuracy accuracy;
  rung::TextScore scan;
  std::size_t scan_lines = 0;
};

std::vector<std::string> texts(const rung::OcrPage& p) {
  std::vector<std::string> out;
  for (const auto& l : p.lines) out.push_back(l.text);
  return out;
}

rung::Result<rung::PipelineReport> read(rung::core::Job& job, const rung::CharacterList& chars, const std::vector<fs::path>& images,
                                        bool sequential, const std::function<void(const rung::OcrPage&)>& on_page = {}) {
  rung::PipelineOptions o;
  o.sequential = sequential;
  o.on_page = on_page;
  return rung::run_ocr_pipeline(job, chars, images, o);
}

rung::Result<RungRun> measure(rung::core::Engine& engine, const rung::CharacterList& chars, const std::vector<Page>& pages) {
  auto job = engine.open_job();
  if (!job) return job.error();
  std::vector<fs::path> images;
  for (const auto& p : pages) images.push_back(p.image);
  const std::vector<fs::path> few(images.begin(), images.begin() + static_cast<std::ptrdiff_t>(std::min(kFewPages, images.size())));
  RungRun out;
  out.load_before = load_average();
  // Warm: sessions opened, first-run allocations made, before anything is timed.
  if (auto w = read(**job, chars, {images.front(), kScan}, false); !w) return w.error();
  auto seq = read(**job, chars, images, true);
  if (!seq) return seq.error();
  out.sequential = *seq;
  reset_peak_rss();
  if (auto f = read(**job, chars, few, false); !f) return f.error();
  out.rss_few = peak_rss_mib();
  reset_peak_rss();
  std::size_t done = 0;
  auto pipe = read(**job, chars, images, false, [&](const rung::OcrPage& page) {
    // Half-way against the end tells a plateau (flat) from a leak (growing with the pages).
    if (++done == images.size() / 2) out.rss_half = peak_rss_mib();
    const Page& p = pages[page.index];
    const rung::TextScore s = rung::score_lines(texts(page), p.truth);
    out.accuracy.all += s;
    (p.turned ? out.accuracy.turned : out.accuracy.upright) += s;
  });
  if (!pipe) return pipe.error();
  out.rss_all = peak_rss_mib();
  out.pipelined = *pipe;
  out.load_after = load_average();
  auto truth = rung::read_truth_lines(RUNG_BENCH_SCAN_TRUTH);
  if (!truth) return truth.error();
  auto scan = read(**job, chars, {kScan}, false, [&](const rung::OcrPage& page) {
    out.scan = rung::score_lines(texts(page), *truth);
  });
  if (!scan) return scan.error();
  return out;
}

nlohmann::json score_json(const rung::TextScore& s) {
  return {{"lines", s.truth_lines}, {"found", s.found_lines}, {"line_recall", s.recall()}, {"cer", s.cer()}};
}

void print(const std::string& name, const RungRun& r) {
  fmt::print("\n== {} ==\nsequential loop:\n{}pipeline:\n{}", name, r.sequential.table(), r.pipelined.table());
  // A time ratio, as every output of rung writes one (rung/ratio_text.h): the pipeline's wall time over the loop's.
  const double time_ratio = r.pipelined.wall_s / r.sequential.wall_s;
  fmt::print("{} the sequential loop's time (goal <= 0.625×, a 1.6-fold gain) · bottleneck {} busy {:.1f}% (goal >= 90%) · peak RSS {:.0f} MiB over {} pages, {:.0f} MiB over {} ({:+.1f}%, goal within 10%)\n",
             rung::ratio_cell(time_ratio), r.pipelined.bottleneck, 100 * r.pipelined.bottleneck_utilisation, r.rss_few, std::min(kFewPages, r.pipelined.pages), r.rss_all, r.pipelined.pages,
             100 * (r.rss_all / r.rss_few - 1));
  fmt::print("peak RSS half-way {:.0f} MiB, at the end {:.0f} MiB ({:+.1f}%: flat is a plateau, growth a leak)\n", r.rss_half, r.rss_all,
             100 * (r.rss_all / r.rss_half - 1));
  fmt::print("load average {:.1f} before, {:.1f} after (this machine has {} cores)\n", r.load_before, r.load_after, std::thread::hardware_concurrency());
  const auto line = [](const char* what, const rung::TextScore& s) {
    fmt::print("  {:<22} {:>5} lines  recall {:6.2f}%  CER {:5.2f}%\n", what, s.truth_lines, 100 * s.recall(), 100 * s.cer());
  };
  line("corpus, all pages", r.accuracy.all);
  line("corpus, upright pages", r.accuracy.upright);
  line("corpus, turned pages", r.accuracy.turned);
  line("skimage page.png", r.scan);
}

nlohmann::json to_json(const RungRun& r) {
  return {{"sequential", nlohmann::json::parse(r.sequential.json())},
          {"pipelined", nlohmann::json::parse(r.pipelined.json())},
          {"speedup", r.sequential.wall_s / r.pipelined.wall_s},
          {"peak_rss_mib", {{"pages_20", r.rss_few}, {"pages_half", r.rss_half}, {"pages_all", r.rss_all}}},
          {"load_average", {{"before", r.load_before}, {"after", r.load_after}}},
          {"accuracy", {{"all", score_json(r.accuracy.all)}, {"upright", score_json(r.accuracy.upright)},
                        {"turned", score_json(r.accuracy.turned)}, {"page_png", score_json(r.scan)}}}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pipeline-bench: the OCR pipeline against a sequential loop, on the floor and on the chosen rung"};
  std::size_t pages = 200;
  std::string corpus_dir = (fs::path(RUNG_BENCH_DEPS_DIR) / "corpus").string(), plugin_dir, json, only;
  rung::cli::add_number(app, "--pages", pages, "Pages of the corpus to read", {1, 100'000, "pages"})->capture_default_str();
  rung::cli::add_text(app, "--corpus", corpus_dir, "Where the rendered corpus is kept");
  rung::cli::add_text(app, "--plugin-dir", plugin_dir, "The simulated accelerator's plugin directory (the chosen rung); none: the floor only");
  rung::cli::add_text(app, "--only", only, "Measure one of the two: floor, or chosen (needs --plugin-dir)")->check(CLI::IsMember({"floor", "chosen"}));
  rung::cli::add_text(app, "--json", json, "Write the figures here");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // a usage error, as in rung's commands
  }
  if (only == "chosen" && plugin_dir.empty()) {
    fmt::print(stderr, "pipeline-bench: --only chosen needs --plugin-dir (the simulated accelerator)\n");
    return 2;
  }

  const auto set = corpus(corpus_dir, pages);
  if (set.size() < pages) {
    fmt::print(stderr, "pipeline-bench: the corpus could not be rendered or read in {}\n", corpus_dir);
    return 2;
  }
  const fs::path models = fs::path(RUNG_BENCH_DEPS_DIR) / "models" / "ppocr";
  auto chars = rung::CharacterList::from_file(models / "ppocr_keys_v1.txt");
  if (!chars) {
    fmt::print(stderr, "pipeline-bench: {}\n", chars.error().message);
    return 2;
  }
  const fs::path scratch = fs::temp_directory_path() / fmt::format("rung-pipeline-bench-{}", rung::this_process_id());
  nlohmann::json out{{"pages", pages}};
  std::vector<std::pair<std::string, std::vector<fs::path>>> rungs;
  if (only != "chosen") rungs.push_back({"floor", {}});
  // rung loads plugin libraries by absolute path only; the command line may name the build's folder relatively.
  if (!plugin_dir.empty() && only != "floor") rungs.push_back({"chosen", {fs::absolute(plugin_dir)}});
  for (const auto& [name, plugins] : rungs) {
    rung::core::EngineOptions o;
    o.cache_dir = scratch / name;
    o.models = {{"ppocr_det_v4", rung::Role::kDetector, models / "ch_PP-OCRv4_det_infer.onnx", {}, {}},
                {"ppocr_rec_v4", rung::Role::kGeneric, models / "ch_PP-OCRv4_rec_infer.onnx", {}, {}},
                {"ppocr_cls", rung::Role::kGeneric, models / "ch_ppocr_mobile_v2.0_cls_infer.onnx", {}, {}}};
    o.runtimes.explicit_dir = fs::path(RUNG_BENCH_DEPS_DIR) / "runtimes" / "onnxruntime-1.30.0";
    o.worker = RUNG_BENCH_WORKER;
    o.plugin_dirs = plugins;
    o.acceptance_ratio = 1000;  // the simulated accelerator is slower by design: admit it
    auto engine = rung::core::Engine::start(o);
    if (!engine) {
      fmt::print(stderr, "pipeline-bench: {}\n", engine.error().message);
      return 3;
    }
    (*engine)->wait_until_settled();
    fmt::print("{}: {}\n", name, (*engine)->about_line());
    auto r = measure(**engine, *chars, set);
    if (!r) {
      fmt::print(stderr, "pipeline-bench: {}: {}\n", name, r.error().message);
      return 1;
    }
    print(name + " (" + r->pipelined.rung + ")", *r);
    out[name] = to_json(*r);
  }
  fs::remove_all(scratch);
  if (!json.empty()) {
    if (auto s = rung::write_file_atomically(json, rung::json_text(out, 1) + "\n"); !s) {
      fmt::print(stderr, "pipeline-bench: {}\n", s.error().message);
      return 2;
    }
  }
  return 0;
}
