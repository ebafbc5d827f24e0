#include "engine/builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>

#include "rungs/forms.h"
#include "jobs/compile.h"
#include "jobs/runner.h"
#include "os/atomic_file.h"
#include "os/file_hash.h"
#include "os/file_lock.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "os/read_file.h"
#include "os/this_process.h"
#include "os/utc_now.h"
#include "os/work_dir.h"
#include "probe/attempts.h"
#include "rung/directory.h"
#include "rung/path_text.h"
#include "rung/printable.h"

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
    auto digest = hashes.hash(path_from_utf8(plan.rung.plugin_library));
    j["plugin_sha256"] = digest ? *digest : "missing";
  }
  return sha256_hex(json_text(j)).substr(0, 16);
}

// One directory per arithmetic: a quantised form's engines never share one with f32 or fp16.
std::string precision_dir(const RungSpec& rung, const ModelRegistration& model) {
  if (rung.append == AppendMethod::kNone) return "cpu-ort";
  if (const DerivedForm* q = quantised_form_for(rung, model)) return numeric_form_name(q->form);
  return builds_fp16(rung, model.role) ? "fp16" : "f32";
}

const char* extension(const RungSpec& rung) { return rung.append == AppendMethod::kNone ? ".ort" : ".onnx"; }

// How one try at a build ended (builder.h: a verdict or a death).
struct BuildTry {
  enum class End { kBuilt, kVerdict, kDied, kNotRun };
  End end = End::kNotRun;
  CompileResult result;
  std::string death;  // kDied: how, in the runner's words without the log ("the worker was killed by SIGKILL")
  std::string log;    // kDied: the last line of the worker's log, when it wrote one
};

// One try, in a child process: no retry here (builder.h says why).
BuildTry compile_in_child(const EngineBuildPlan& plan, const CompileJob& job, const fs::path& cache_root) {
  BuildTry t;
  auto work = WorkDir::create("work", cache_root);
  if (!work) {
    t.result = {false, work.error().message, 0};
    return t;
  }
  JobOutcome outcome = JobRunner(plan.worker).run({"compile", job, plan.deadline, work->path(), {}, plan.cancel, plan.memory_limit_mb});
  t.result = {outcome.ok(), outcome.ok() ? std::string() : outcome.describe(), outcome.elapsed_ms};
  if (outcome.ok()) {
    t.end = BuildTry::End::kBuilt;
  } else if (outcome.died()) {
    t.end = BuildTry::End::kDied;
    t.log = outcome.log_line;
    outcome.log_line.clear();
    t.death = outcome.describe();
    t.result.error = died_once_words(t.death);
  } else if (outcome.result.is_object()) {
    t.end = BuildTry::End::kVerdict;  // the worker's own answer: the provider said no
  }  // else it never ran (could not be started): nothing is learned, nothing is recorded
  return t;
}

// The ledger's key for a slot: its precision directory and its name, under the fingerprint's directory.
std::string ledger_key(const EngineSlot& slot) { return (slot.file.parent_path().filename() / slot.file.stem()).string(); }

// The landed engine's identity (EngineSlot::identity), written after the engine: an engine without one (a crash
// between the two, a cache from before identities) is rebuilt rather than trusted.
Status write_identity(const EngineSlot& slot, const std::string& model, const std::string& source_sha256, const std::string& fingerprint,
                      const EngineBuildPlan& plan, FileHashCache& hashes) {
  auto engine_sha256 = hashes.hash(slot.file);
  if (!engine_sha256) return engine_sha256.error();
  const nlohmann::json identity = {{"model", model},
                                   {"source_sha256", source_sha256},
                                   {"engine_sha256", *engine_sha256},
                                   {"fingerprint", fingerprint},
                                   {"runtime", plan.build.version},
                                   {"rung", plan.rung.name}};
  return write_file_atomically(slot.identity, json_text(identity, 2));
}

// Why the cached engine in `slot` is not the one built from `source_sha256` under `fingerprint`, or "" when it is.
std::string identity_mismatch(const EngineSlot& slot, const std::string& source_sha256, const std::string& fingerprint, FileHashCache& hashes) {
  auto text = read_input_file_if_usable(slot.identity, FileKind::kDocument);
  if (!text) return fmt::format("it has no identity ({} is missing or unreadable)", slot.identity.filename().string());
  const auto j = parse_json_or_discarded(*text);
  if (json_string_or(j, "source_sha256", "") != source_sha256) {
    return fmt::format("it was built from another file (sha256 {}, the model is {})", printable(json_string_or(j, "source_sha256", "none"), 12),
                       source_sha256.substr(0, 12));
  }
  if (json_string_or(j, "fingerprint", "") != fingerprint) return "it was built for another runtime, device or rung";
  auto now = hashes.hash(slot.file);
  if (!now) return fmt::format("it cannot be read: {}", now.error().message);
  if (*now != json_string_or(j, "engine_sha256", "")) {
    return fmt::format("its bytes changed since it was built (sha256 {}, built as {})", now->substr(0, 12),
                       printable(json_string_or(j, "engine_sha256", "none"), 12));
  }
  return {};
}

// A cached engine that failed its identity goes, with its identity; the slot is then built again.
void forget_engine(const EngineSlot& slot) {
  std::error_code ec;
  fs::remove(slot.file, ec);
  fs::remove(slot.identity, ec);
}

void write_failure_record(const EngineSlot& slot, const nlohmann::json& record) {
  (void)write_file_atomically(slot.failure_record, json_text(record, 2));
}

// Deaths in kStrikesToRefuse launches in a row: recorded like a verdict, so the
// next start reads the record and tries nothing.
std::string refuse_after_deaths(const EngineBuildPlan& plan, const ModelRegistration& m, const EngineSlot& slot, const std::string& sha,
                                AttemptLedger& ledger, const std::string& key, const std::string& log) {
  const StrikeNote* last = ledger.last(key);
  const std::string what = last != nullptr && !last->what.empty() ? last->what : "the build died";
  const std::string reason = died_refused_words(what, ledger.strikes(key));
  nlohmann::json record = {{"model", m.name}, {"sha256", sha}, {"rung", plan.rung.name}, {"reason", reason},
                           {"deaths", ledger.strikes(key)}, {"last_launch", last != nullptr ? last->launch : ""},
                           {"last_death", last != nullptr ? last->when : ""}};
  if (!log.empty()) record["log"] = log;
  write_failure_record(slot, record);
  ledger.end(key);  // the record carries it from here
  return reason;
}

// Under the build lock, what a killed builder left: temporaries and its work directories.
void remove_stale_temporaries(const fs::path& root) {
  std::error_code ec;
  if (auto entries = list_directory(root)) {
    for (const auto& e : *entries) {
      if (fs::is_directory(fs::symlink_status(e, ec)) && e.filename().string().rfind("work.", 0) == 0) remove_tree(e, ec);
    }
  }
  if (auto below = list_directory(root, {.recursive = true})) {
    for (const auto& e : *below) {
      if (fs::is_regular_file(fs::symlink_status(e, ec)) && e.filename().string().find(".tmp.") != std::string::npos) fs::remove(e, ec);
    }
  }
}

}  // namespace

std::filesystem::path engine_source(const RungSpec& rung, const ModelRegistration& model) {
  const DerivedForm* q = quantised_form_for(rung, model);
  return q != nullptr ? q->path : model.f32;
}

std::string new_launch_id() {
  static std::atomic<unsigned> started{0};
  return fmt::format("pid {} at {} #{}", this_process_id(), utc_now(), ++started);
}

std::string died_once_words(const std::string& what) { return what + "; died once, will retry at the next start"; }

std::string died_refused_words(const std::string& what, int launches) {
  return fmt::format("{} in {} launches in a row; this rung is not tried again for this model until the file or the runtime changes", what,
                     launches);
}

EngineSlot engine_slot(const EngineBuildPlan& plan, const ModelRegistration& model, const std::string& model_sha256) {
  FileHashCache hashes(plan.cache_dir);
  const fs::path dir = plan.cache_dir / "engines" / path_from_utf8(engine_fingerprint(plan, hashes)) / path_from_utf8(precision_dir(plan.rung, model));
  // A stem that cannot climb out of the cache, whatever the model is called (rung/model.h).
  std::string stem = fmt::format("{}-{}", model_file_stem(model.name), model_sha256.substr(0, 12));
  return {dir / path_from_utf8(stem + extension(plan.rung)), dir / path_from_utf8(stem + ".failed.json"), dir / path_from_utf8(stem + ".rewritten.onnx"),
          dir / path_from_utf8(stem + ".identity.json")};
}

namespace {

// Compiles one model's engine under a temporary name, then renames it into its
// slot; a verdict is recorded beside the slot so it is not retried for this
// file, a death is a strike in the ledger (builder.h).
EngineLanding build_engine(const EngineBuildPlan& plan, const ModelRegistration& m, const EngineSlot& slot, const std::string& sha,
                           const fs::path& root, AttemptLedger& ledger, const std::string& launch, FileHashCache& hashes) {
  std::error_code ec;
  fs::create_directories(slot.file.parent_path(), ec);
  const fs::path tmp = slot.file.parent_path() / path_from_utf8(fmt::format("{}.tmp.{}{}", slot.file.stem().string(), this_process_id(), slot.file.extension().string()));
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
  const std::string key = ledger_key(slot);
  BuildTry t;
  if (plan.worker.empty()) {
    // In this process: should it die here, the attempt file tells the next launch.
    (void)ledger.begin(key, m.name, launch);
    t.result = run_compile_job(job);
    t.end = t.result.ok ? BuildTry::End::kBuilt : BuildTry::End::kVerdict;
  } else {
    t = compile_in_child(plan, job, root);
  }
  if (t.end == BuildTry::End::kBuilt) {
    ledger.end(key);  // it survived: strikes count only in a row
    fs::remove(slot.identity, ec);  // no moment where an old identity stands beside the new engine
    if (auto s = commit_file(tmp, slot.file); !s) {
      fs::remove(tmp, ec);
      return {m.name, {}, s.error().message};  // this file system's fault, not the model's: tried again next start
    }
    if (auto s = write_identity(slot, m.name, sha, root.filename().string(), plan, hashes); !s) {
      forget_engine(slot);
      return {m.name, {}, "the engine's identity could not be written: " + s.error().message};
    }
    return {m.name, slot.file, {}, read_rewrite_note(slot.rewritten)};
  }
  fs::remove(tmp, ec);
  if (t.end == BuildTry::End::kDied) {
    if (ledger.strike(key, launch, t.death) < kStrikesToRefuse) return {m.name, {}, t.result.error};
    return {m.name, {}, refuse_after_deaths(plan, m, slot, sha, ledger, key, t.log)};
  }
  if (t.end == BuildTry::End::kVerdict) {
    ledger.end(key);
    write_failure_record(slot, {{"model", m.name}, {"sha256", sha}, {"rung", plan.rung.name}, {"reason", t.result.error}});
  }
  return {m.name, {}, t.result.error};
}

}  // namespace

std::vector<EngineLanding> build_engines(const EngineBuildPlan& plan,
                                         const std::function<void(const EngineLanding&, std::size_t)>& on_landing,
                                         const std::function<void(const std::string&)>& on_start,
                                         const std::atomic<bool>& stop) {
  std::vector<EngineLanding> out;
  FileHashCache hashes(plan.cache_dir);
  const fs::path root = plan.cache_dir / "engines" / path_from_utf8(engine_fingerprint(plan, hashes));
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
  // An engine being freed stops the wait too (then the loop below ends at once).
  if (auto l = CacheLock::acquire(root / "build.lock", plan.deadline * static_cast<int>(plan.models.size() + 1), {}, &stop)) lock.emplace(std::move(*l));
  if (lock) remove_stale_temporaries(root);
  // Under the lock: one builder counts this directory's strikes at a time.
  AttemptLedger ledger(root, root.filename().string());
  const std::string launch = plan.launch.empty() ? new_launch_id() : plan.launch;

  for (const ModelRegistration* m : order) {
    if (stop) break;
    auto sha = hashes.hash(engine_source(plan.rung, *m));
    if (!sha) {
      land({m->name, {}, sha.error().message});
      continue;
    }
    EngineSlot slot = engine_slot(plan, *m, *sha);
    std::string replaced;
    if (fs::is_regular_file(slot.file, ec)) {
      replaced = identity_mismatch(slot, *sha, root.filename().string(), hashes);
      if (replaced.empty()) {
        land({m->name, slot.file, {}, read_rewrite_note(slot.rewritten)});
        continue;
      }
      forget_engine(slot);  // never run: built again below
    }
    if (fs::is_regular_file(slot.failure_record, ec)) {
      auto text = read_input_file_if_usable(slot.failure_record, FileKind::kDocument);
      const auto j = text ? parse_json_or_discarded(*text) : nlohmann::json();
      land({m->name, {}, json_string_or(j, "reason", "failed before")});
      continue;
    }
    const std::string key = ledger_key(slot);
    if (ledger.refused(key)) {  // launches that died building it in process
      land({m->name, {}, refuse_after_deaths(plan, *m, slot, *sha, ledger, key, {})});
      continue;
    }
    if (const StrikeNote* last = ledger.last(key); last != nullptr && last->launch == launch) {
      land({m->name, {}, died_once_words(last->what)});  // it died in this launch already: not again before the next
      continue;
    }
    if (on_start) on_start(m->name);
    EngineLanding landing = build_engine(plan, *m, slot, *sha, root, ledger, launch, hashes);
    landing.replaced = replaced.empty() ? "" : "the cached engine was not used: " + replaced;
    land(std::move(landing));
  }
  hashes.save();
  return out;
}

}  // namespace rung
