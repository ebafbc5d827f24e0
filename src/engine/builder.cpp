#include "engine/builder.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/forms.h"
#include "jobs/compile.h"
#include "jobs/runner.h"
#include "os/atomic_file.h"
#include "os/file_hash.h"
#include "os/file_lock.h"
#include "os/json_input.h"
#include "os/read_file.h"
#include "os/work_dir.h"
#include "probe/attempts.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// Everything an engine depends on besides the model: runtime, device, rung.
std::string engine_fingerprint(const EngineBuildPlan& plan, FileHashCache& hashes) {
  nlohmann::json j = {{"runtime", plan.build.version},
                      {"runtime_path", fs::weakly_canonical(plan.build.library).string()},
                      {"api", plan.build.api_version},
                      {"device", plan.hardware.identity()},
                      {"rung", plan.rung.name},
                      {"provider", plan.rung.provider}};
  if (!plan.rung.plugin_library.empty()) {
    auto digest = hashes.hash(plan.rung.plugin_library);
    j["plugin_sha256"] = digest ? *digest : "missing";
  }
  return sha256_hex(j.dump()).substr(0, 16);
}

// One directory per arithmetic: a quantised form's engines never share one with f32 or fp16.
std::string precision_dir(const RungSpec& rung, const ModelRegistration& model) {
  if (rung.append == AppendMethod::kNone) return "cpu-ort";
  if (const DerivedForm* q = quantised_form_for(rung, model)) return numeric_form_name(q->form);
  return builds_fp16(rung, model.role) ? "fp16" : "f32";
}

const char* extension(const RungSpec& rung) { return rung.append == AppendMethod::kNone ? ".ort" : ".onnx"; }

// A worker that dies (killed, out of memory) says nothing about the model: the
// build is tried again, and only kStrikesToRefuse deaths in a row refuse it.
CompileResult compile_in_child(const EngineBuildPlan& plan, const CompileJob& job, const fs::path& cache_root) {
  JobOutcome outcome;
  for (int death = 1; death <= kStrikesToRefuse; ++death) {
    auto work = WorkDir::create("work", cache_root);
    if (!work) return {false, work.error().message, 0};
    outcome = JobRunner(plan.worker).run({"compile", job, plan.deadline, work->path(), {}});
    if (outcome.status != JobOutcome::Status::kCrashed) break;
    if (death == kStrikesToRefuse) {
      return {false, fmt::format("{}; the compile worker died {} times in a row, so this build is refused", outcome.describe(), kStrikesToRefuse),
              outcome.elapsed_ms};
    }
  }
  return {outcome.ok(), outcome.ok() ? std::string() : outcome.describe(), outcome.elapsed_ms};
}

// Under the build lock, what a killed builder left: temporaries and its work directories.
void remove_stale_temporaries(const fs::path& root) {
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename().string().rfind("work.", 0) == 0) fs::remove_all(it->path(), ec);
  }
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename().string().find(".tmp.") != std::string::npos) {
      fs::remove(it->path(), ec);
    }
  }
}

}  // namespace

std::filesystem::path engine_source(const RungSpec& rung, const ModelRegistration& model) {
  const DerivedForm* q = quantised_form_for(rung, model);
  return q != nullptr ? q->path : model.f32;
}

EngineSlot engine_slot(const EngineBuildPlan& plan, const ModelRegistration& model, const std::string& model_sha256) {
  FileHashCache hashes(plan.cache_dir);
  fs::path dir = plan.cache_dir / "engines" / engine_fingerprint(plan, hashes) / precision_dir(plan.rung, model);
  std::string stem = fmt::format("{}-{}", model.name, model_sha256.substr(0, 12));
  return {dir / (stem + extension(plan.rung)), dir / (stem + ".failed.json"), dir / (stem + ".rewritten.onnx")};
}

namespace {

// Compiles one model's engine under a temporary name, then renames it into its
// slot; a failure is recorded beside the slot so it is not retried for this file.
EngineLanding build_engine(const EngineBuildPlan& plan, const ModelRegistration& m, const EngineSlot& slot, const std::string& sha,
                           const fs::path& root) {
  std::error_code ec;
  fs::create_directories(slot.file.parent_path(), ec);
  fs::path tmp = slot.file.parent_path() / fmt::format("{}.tmp.{}{}", slot.file.stem().string(), ::getpid(), slot.file.extension().string());
  CompileJob job;
  job.target.runtime_library = plan.build.library;
  job.target.allow_writable_runtime = plan.allow_writable_runtime;
  job.target.model = engine_source(plan.rung, m);
  job.target.rung = plan.rung;
  job.output = tmp;
  job.fp16 = builds_fp16(plan.rung, m.role);  // never for a quantised form: only kF32ToF16Engine rungs build fp16
  job.provider_cache_dir = slot.file.parent_path() / "provider";
  job.tensorrt_workspace_bytes = plan.tensorrt_workspace_bytes;
  if (plan.rung.append != AppendMethod::kNone) {
    job.rewritten = slot.rewritten;
    job.inputs = m.inputs;
    job.seed = plan.input_seed;
  }
  CompileResult r = plan.worker.empty() ? run_compile_job(job) : compile_in_child(plan, job, root);
  if (r.ok) {
    if (auto s = commit_file(tmp, slot.file); !s) {
      r.ok = false;
      r.error = s.error().message;
    }
  }
  if (r.ok) return {m.name, slot.file, {}, read_rewrite_note(slot.rewritten)};
  fs::remove(tmp, ec);
  nlohmann::json record = {{"model", m.name}, {"sha256", sha}, {"rung", plan.rung.name}, {"reason", r.error}};
  (void)write_file_atomically(slot.failure_record, record.dump(2));
  return {m.name, {}, r.error};
}

}  // namespace

std::vector<EngineLanding> build_engines(const EngineBuildPlan& plan,
                                         const std::function<void(const EngineLanding&, std::size_t)>& on_landing,
                                         const std::function<void(const std::string&)>& on_start,
                                         const std::atomic<bool>& stop) {
  std::vector<EngineLanding> out;
  FileHashCache hashes(plan.cache_dir);
  const fs::path root = plan.cache_dir / "engines" / engine_fingerprint(plan, hashes);
  std::error_code ec;
  fs::create_directories(root, ec);

  // Smallest first: the model that runs per item is usually the small one.
  std::vector<const ModelRegistration*> order;
  for (const auto& m : plan.models) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(), [&plan](const ModelRegistration* a, const ModelRegistration* b) {
    std::error_code e1, e2;
    return fs::file_size(engine_source(plan.rung, *a), e1) < fs::file_size(engine_source(plan.rung, *b), e2);
  });

  auto land = [&](EngineLanding l) {
    out.push_back(l);
    if (on_landing) on_landing(out.back(), out.size());
  };

  // One builder per engine directory at a time, across processes; the second
  // finds the first one's engines in place when it gets the lock.
  std::optional<CacheLock> lock;
  if (auto l = CacheLock::acquire(root / "build.lock", plan.deadline * static_cast<int>(plan.models.size() + 1))) lock.emplace(std::move(*l));
  if (lock) remove_stale_temporaries(root);

  for (const ModelRegistration* m : order) {
    if (stop) break;
    auto sha = hashes.hash(engine_source(plan.rung, *m));
    if (!sha) {
      land({m->name, {}, sha.error().message});
      continue;
    }
    EngineSlot slot = engine_slot(plan, *m, *sha);
    if (fs::is_regular_file(slot.file, ec)) {
      land({m->name, slot.file, {}, read_rewrite_note(slot.rewritten)});
      continue;
    }
    if (fs::is_regular_file(slot.failure_record, ec)) {
      const auto j = parse_json_or_discarded(read_text_file(slot.failure_record));
      land({m->name, {}, json_string_or(j, "reason", "failed before")});
      continue;
    }
    if (on_start) on_start(m->name);
    land(build_engine(plan, *m, slot, *sha, root));
  }
  hashes.save();
  return out;
}

}  // namespace rung
