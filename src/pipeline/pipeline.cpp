// The threaded pipeline: decode (a pool) -> detect -> crop -> classify ->
// recognise (one or more threads on one session) -> write (the caller's thread,
// in input order), joined by bounded queues; and the sequential loop over the
// same steps that it is measured against.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <cmath>

#include "core/thread_limit.h"
#include "os/this_process.h"
#include "pipeline/ocr_steps.h"
#include "pipeline/queue.h"
#include "rung/cpus.h"
#include "rung/pipeline.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One thread's account of its stage, added to the stage's total when it stops.
struct Tally {
  StageReport* stage;
  std::mutex* mutex;
  double busy = 0, cpu = 0, waiting = 0, blocked = 0;
  std::size_t items = 0;

  template <class Work>
  void time(Work&& work) {
    const auto t = Clock::now();
    const double c = this_thread_cpu_seconds();
    work();
    busy += since(t);
    cpu += this_thread_cpu_seconds() - c;
    ++items;
  }
  ~Tally() {
    std::lock_guard lock(*mutex);
    stage->busy_s += busy, stage->cpu_s += cpu, stage->waiting_s += waiting, stage->blocked_s += blocked;
    stage->items += items;
  }
};

class Run {
 public:
  Run(const OcrSteps& steps, const std::vector<fs::path>& images, const PipelineOptions& options, PipelineReport& report)
      : steps_(steps), images_(images), options_(options), report_(report) {}

  void sequential(std::stop_token stop) {
    StageReport& decode = add_stage("decode", 1);
    StageReport& detect = add_stage("detect", 1);
    StageReport& crop = add_stage("crop", 1);
    StageReport* classify = options_.classifier.empty() ? nullptr : &add_stage("classify", 1);
    StageReport& recognise = add_stage("recognise", 1);
    StageReport& write = add_stage("write", 1);
    const auto start = Clock::now();
    for (std::size_t i = 0; i < images_.size() && !stop.stop_requested(); ++i) {
      PageWork page{i, images_[i], {}, {}, {}, {}, {}, {}};
      Tally{&decode, &mutex_}.time([&] { OcrSteps::decode(page); });
      Tally{&detect, &mutex_}.time([&] { steps_.detect(page); });
      Tally{&crop, &mutex_}.time([&] { OcrSteps::crop(page); });
      if (classify != nullptr) Tally{classify, &mutex_}.time([&] { steps_.classify(page); });
      Tally{&recognise, &mutex_}.time([&] { steps_.recognise(page); });
      Tally{&write, &mutex_}.time([&] { write_page(steps_.finish(std::move(page))); });
    }
    report_.wall_s = since(start);
    report_.stages.assign(stages_.begin(), stages_.end());
  }

  void threaded(std::stop_token stop) {
    // decode -> detect -> crop [-> classify] -> recognise -> write: one queue between each two.
    std::vector<std::unique_ptr<BoundedQueue<PageWork>>> queues;
    const std::size_t links = options_.classifier.empty() ? 4 : 5;
    for (std::size_t i = 0; i < links; ++i) queues.push_back(std::make_unique<BoundedQueue<PageWork>>(options_.queue_depth));
    std::vector<std::jthread> threads;
    const auto start = Clock::now();
    {
      // Cancelling wakes every stage; each leaves after the page in hand.
      std::stop_callback cancel(stop, [&] {
        for (auto& q : queues) q->cancel();
      });
      auto link = queues.begin();
      start_decode(threads, **link, stop);
      start_stage(threads, "detect", 1, **link, **(link + 1), [this](PageWork& p) { steps_.detect(p); });
      ++link;
      start_stage(threads, "crop", 1, **link, **(link + 1), [](PageWork& p) { OcrSteps::crop(p); });
      ++link;
      if (!options_.classifier.empty()) {
        start_stage(threads, "classify", 1, **link, **(link + 1), [this](PageWork& p) { steps_.classify(p); });
        ++link;
      }
      start_stage(threads, "recognise", recognise_threads(), **link, **(link + 1), [this](PageWork& p) { steps_.recognise(p); });
      write_in_order(**(link + 1));
      threads.clear();  // joins every stage while the queues they use still exist
    }
    report_.wall_s = since(start);
    report_.stages.assign(stages_.begin(), stages_.end());
  }

 private:
  StageReport& add_stage(const std::string& name, int threads) {
    StageReport s;
    s.name = name;
    s.threads = threads;
    return stages_.emplace_back(std::move(s));
  }

  int recognise_threads() const {
    if (options_.recognise_threads > 0) return options_.recognise_threads;
    // The recogniser costs several times the rest together: it gets a thread per core, and
    // the light stages' threads fit in around it.
    return usable_cpus();
  }

  void start_decode(std::vector<std::jthread>& threads, BoundedQueue<PageWork>& out, std::stop_token stop) {
    const int n = std::max(1, options_.decode_threads);
    StageReport& stage = add_stage("decode", n);
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([this, &stage, &out, n, stop] {
        {
          Tally tally{&stage, &mutex_};
          for (std::size_t i = next_image_++; i < images_.size() && !stop.stop_requested(); i = next_image_++) {
            PageWork page{i, images_[i], {}, {}, {}, {}, {}, {}};
            tally.time([&] { OcrSteps::decode(page); });
            const auto t0 = Clock::now();
            if (!out.push(std::move(page))) break;
            tally.blocked += since(t0);
          }
        }
        if (++decoders_done_ == n) out.close();
      });
    }
  }

  template <class Work>
  void start_stage(std::vector<std::jthread>& threads, const std::string& name, int n, BoundedQueue<PageWork>& in,
                                      BoundedQueue<PageWork>& out, Work work) {
    StageReport& stage = add_stage(name, n);
    auto live = std::make_shared<std::atomic<int>>(n);
    for (int t = 0; t < n; ++t) {
      threads.emplace_back([this, &stage, &in, &out, live, work] {
        {
          Tally tally{&stage, &mutex_};
          while (true) {
            auto t0 = Clock::now();
            auto page = in.pop();
            tally.waiting += since(t0);
            if (!page) break;
            tally.time([&] { work(*page); });
            t0 = Clock::now();
            if (!out.push(std::move(*page))) break;
            tally.blocked += since(t0);
          }
        }
        if (--*live == 0) out.close();
      });
    }
  }

  // Pages come out of order when several threads share a stage; they are written in the order given.
  void write_in_order(BoundedQueue<PageWork>& in) {
    StageReport& stage = add_stage("write", 1);
    Tally tally{&stage, &mutex_};
    std::map<std::size_t, OcrPage> waiting;
    std::size_t next = 0;
    while (true) {
      const auto t0 = Clock::now();
      auto page = in.pop();
      tally.waiting += since(t0);
      if (!page) break;
      tally.time([&] {
        OcrPage done = steps_.finish(std::move(*page));
        waiting.emplace(done.index, std::move(done));
        for (auto it = waiting.begin(); it != waiting.end() && it->first == next; it = waiting.erase(it), ++next) {
          write_page(it->second);
        }
      });
    }
  }

  void write_page(const OcrPage& page) {
    ++report_.pages;
    if (!page.ok()) ++report_.failed;
    if (options_.on_page) options_.on_page(page);
  }

  const OcrSteps& steps_;
  const std::vector<fs::path>& images_;
  const PipelineOptions& options_;
  PipelineReport& report_;
  std::deque<StageReport> stages_;  // threads hold references to these while they run
  std::mutex mutex_;
  std::atomic<std::size_t> next_image_{0};
  std::atomic<int> decoders_done_{0};
};

// Checked before any thread starts: an application passes these with no CLI in
// front, and 100000 decode threads would abort the process when it runs out.
Status check_options(const PipelineOptions& o) {
  const auto bad = [](const std::string& why) { return Error{ErrorCode::kInvalidArgument, why}; };
  RUNG_RETURN_IF_ERROR(check_thread_count(o.decode_threads, "decode threads"));
  RUNG_RETURN_IF_ERROR(check_thread_count(o.recognise_threads, "recognise threads"));
  if (o.recognise_batch > kMaxOcrBatch) return bad(fmt::format("a recognise batch of {} is out of range: 0 (the rung's default) to {}", o.recognise_batch, kMaxOcrBatch));
  if (o.classify_batch < 1 || o.classify_batch > kMaxOcrBatch) return bad(fmt::format("a classify batch of {} is out of range: 1 to {}", o.classify_batch, kMaxOcrBatch));
  if (o.queue_depth < 1 || o.queue_depth > kMaxOcrBatch) return bad(fmt::format("a queue depth of {} is out of range: 1 to {}", o.queue_depth, kMaxOcrBatch));
  if (!(std::isfinite(o.boxes.unclip_ratio) && o.boxes.unclip_ratio > 0 && o.boxes.unclip_ratio <= kMaxUnclipRatio)) {
    return bad(fmt::format("an unclip ratio of {} is out of range: above 0, at most {}", o.boxes.unclip_ratio, kMaxUnclipRatio));
  }
  for (const auto& [name, v] : {std::pair{"turn threshold", o.turn_threshold}, std::pair{"drop score", o.drop_score}}) {
    if (!(v >= 0 && v <= 1)) return bad(fmt::format("a {} of {} is out of range: 0 to 1", name, v));
  }
  return {};
}

void summarise(PipelineReport& r) {
  r.pages_per_second = r.wall_s > 0 ? static_cast<double>(r.pages) / r.wall_s : 0;
  for (auto& s : r.stages) {
    s.utilisation = r.wall_s > 0 && s.threads > 0 ? s.busy_s / (r.wall_s * s.threads) : 0;
    if (s.utilisation > r.bottleneck_utilisation) {
      r.bottleneck_utilisation = s.utilisation;
      r.bottleneck = s.name;
    }
  }
}

}  // namespace

Result<PipelineReport> run_ocr_pipeline(core::Job& job, const CharacterList& characters, const std::vector<fs::path>& images,
                                        const PipelineOptions& options, std::stop_token stop) {
  RUNG_RETURN_IF_ERROR(check_options(options));
  auto steps = OcrSteps::open(job, characters, options);
  if (!steps) return steps.error();
  PipelineReport report;
  report.rung = job.rung();
  report.model_ids = job.model_ids();
  report.model_rungs = steps->rungs();
  report.sequential = options.sequential;
  Run run(*steps, images, options, report);
  if (options.sequential) {
    run.sequential(stop);
  } else {
    run.threaded(stop);
  }
  report.cancelled = stop.stop_requested() && report.pages < images.size();
  summarise(report);
  return report;
}

}  // namespace rung
