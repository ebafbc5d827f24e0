// The probe's decision: from the cache when it holds, else by the walk handed in.
#include "probe/decision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/thread_limit.h"
#include "rung/cpus.h"
#include "os/environment.h"
#include "os/file_hash.h"
#include "os/file_lock.h"
#include "os/this_process.h"
#include "os/regular_file.h"
#include "probe/cache.h"
#include "probe/fingerprint.h"
#include "probe/launch.h"
#include "runtime/plugin_rungs.h"
#include "runtime/software_gpu.h"

namespace rung {
namespace fs = std::filesystem;

void note(const ProbeOptions& o, ProbeOutcome& out, std::string line) {
  if (o.on_log) o.on_log(line);
  out.log.push_back(std::move(line));
}

namespace {

std::vector<std::string> rung_names(const std::vector<RungSpec>& ladder) {
  std::vector<std::string> names;
  for (const auto& r : ladder) names.push_back(r.name);
  return names;
}

// The rung forced by the caller's configuration, else by RUNG_FORCE_RUNG (when the
// environment is read), and which of the two forced it; nullopt when none is.
std::optional<std::pair<std::string, std::string>> forced_rung(const ProbeOptions& o) {
  if (o.forced_rung && !o.forced_rung->empty()) return std::pair<std::string, std::string>{*o.forced_rung, "configuration"};
  if (auto env = rung_variable("RUNG_FORCE_RUNG", o.runtimes.read_environment); env && !env->empty()) {
    return std::pair<std::string, std::string>{*env, "RUNG_FORCE_RUNG"};
  }
  return std::nullopt;
}

int index_on(const std::vector<RungSpec>& ladder, const std::string& name) {
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    if (same_rung_name(ladder[i].name, name) || same_rung_name(ladder[i].display, name)) return static_cast<int>(i);
  }
  return -1;
}

// A forced rung this device's ladder does not hold is refused before anything is probed or cached.
Status check_forced_rung_is_on(const ProbeOptions& o, const std::vector<RungSpec>& ladder) {
  const auto forced = forced_rung(o);
  if (!forced || index_on(ladder, forced->first) >= 0) return {};
  return Error{ErrorCode::kInvalidArgument, fmt::format("cannot force rung '{}' (from {}): this device's ladder is {}", forced->first, forced->second,
                                                        fmt::join(rung_names(ladder), ", "))};
}

Status apply_override(const ProbeOptions& o, const std::vector<RungSpec>& ladder, ProbeOutcome& out) {
  const auto forced = forced_rung(o);
  if (!forced) return {};
  RUNG_RETURN_IF_ERROR(check_forced_rung_is_on(o, ladder));
  const std::string& by = forced->second;
  const int f = index_on(ladder, forced->first), c = index_on(ladder, out.chosen);
  if (f < c) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("cannot force rung '{}' (from {}): it ranks above the chosen rung '{}'; only a lower rung can be forced",
                             forced->first, by, out.chosen)};
  }
  out.chosen = ladder[static_cast<std::size_t>(f)].name;
  out.chosen_display = ladder[static_cast<std::size_t>(f)].display;
  out.forced_by = by;
  return {};
}

Status check_options(const ProbeOptions& o) {
  if (o.cache_dir.empty()) return Error{ErrorCode::kInvalidArgument, "the probe needs a cache directory"};
  if (o.probe_runs < 1) return Error{ErrorCode::kInvalidArgument, fmt::format("runs must be at least 1, not {}", o.probe_runs)};
  RUNG_RETURN_IF_ERROR(check_deadline(o.probe_deadline, "the deadline"));
  if (!(std::isfinite(o.acceptance_ratio) && o.acceptance_ratio > 0)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("the acceptance ratio must be a finite positive number, not {}", o.acceptance_ratio)};
  }
  if (!(o.min_placed_share >= 0 && o.min_placed_share <= 1)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("the minimum placed share must lie in [0, 1], not {}", o.min_placed_share)};
  }
  if (!(o.min_gain >= 0 && o.min_gain < 1)) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("the minimum gain must lie in [0, 1), not {}", o.min_gain)};
  }
  if (o.threads != ProbeOptions::kInferenceThreads) {
    RUNG_RETURN_IF_ERROR(check_thread_count(o.threads, "threads"));
  }
  if (o.models.empty()) return Error{ErrorCode::kInvalidArgument, "no models are registered"};
  for (const auto& m : o.models) {
    RUNG_RETURN_IF_ERROR(check_model_file_kind(m.name, m.path));
  }
  return {};
}

// The probe models: those named, else the smallest registered model, the others
// after it by size (tried only when the floor cannot run the ones before them).
Result<std::vector<const RegisteredModel*>> choose_probe_models(const ProbeOptions& o) {
  std::vector<const RegisteredModel*> chosen;
  if (o.probe_models.empty()) {
    std::vector<std::pair<std::uintmax_t, const RegisteredModel*>> by_size;
    for (const auto& m : o.models) {
      std::error_code ec;
      auto size = fs::file_size(m.path, ec);
      by_size.emplace_back(ec ? UINTMAX_MAX : size, &m);
    }
    std::stable_sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [size, m] : by_size) chosen.push_back(m);
    return chosen;
  }
  for (const auto& name : o.probe_models) {
    auto it = std::find_if(o.models.begin(), o.models.end(), [&](const RegisteredModel& m) { return m.name == name; });
    if (it == o.models.end()) return Error{ErrorCode::kInvalidArgument, fmt::format("probe model '{}' is not registered", name)};
    chosen.push_back(&*it);
  }
  return chosen;
}

// `allow_warm`: the cache's record of the builds may spare opening all but the one it names.
Result<ProbeSetting> find_setting(const ProbeOptions& given, bool allow_warm) {
  Hardware hw = detect_hardware(given.hardware_root);
  auto launch = discover_launch_runtimes(given.runtimes, hw, probe_cache_file(given.cache_dir), allow_warm, given.open_vouched_build);
  if (!launch) return launch.error();
  auto models = choose_probe_models(given);  // into the caller's models, which outlive the probe
  if (!models) return models.error();
  ProbeSetting s{given, std::move(hw), std::move(launch->discovery), nullptr, {}, std::move(*models), {}, false,
                 std::move(launch->found), std::move(launch->seen), launch->warm};
  if (s.o.threads == ProbeOptions::kInferenceThreads) s.o.threads = std::min(default_inference_threads(s.hw.cpu), usable_cpus());
  if (s.o.probe_models.empty() && s.probe_models.size() > 1) {
    s.spare_probe_models.assign(s.probe_models.begin() + 1, s.probe_models.end());
    s.probe_models.resize(1);
  }
  s.build = s.discovery.chosen_build();
  auto ladder = effective_ladder(s.hw, *s.build, s.o.plugin_dirs, s.o.runtimes.allow_writable_plugins, s.o.runtimes.read_plugin_environment);
  if (!ladder) return ladder.error();
  s.ladder = std::move(*ladder);
  return s;
}

// Creates the cache directory; false (and a note) when it cannot be written.
bool prepare_cache_dir(const ProbeOptions& o, ProbeOutcome& out) {
  std::error_code ec;
  fs::create_directories(o.cache_dir, ec);
  if (!ec && may_create_files_in(o.cache_dir)) return true;
  note(o, out, fmt::format("could not cache: {} is not writable{}", o.cache_dir.string(), ec ? " (" + ec.message() + ")" : ""));
  return false;
}

// One go at the decision. With `allow_warm`, only the build the cache's record
// names is opened; when the cache then turns out not to hold under the lock (or
// to hold under another record, written meanwhile), `again` is set and the
// outcome so far (its log) returned: the caller starts over with every build
// opened, so a decision is only ever made, or rewritten, on a full discovery.
Result<std::optional<ProbeOutcome>> probe_once(const ProbeOptions& given, const Status& lent, bool allow_warm, ProbeWalk walk, bool& again) {
  again = false;
  auto setting = find_setting(given, allow_warm);
  if (!setting) return setting.error();
  ProbeSetting& s = *setting;
  const ProbeOptions& o = s.o;  // as resolved for this hardware: what the fingerprint and the walk use

  ProbeOutcome out;
  out.runtime_version = s.build->version;
  out.runtime_library = s.build->library;
  out.builds_found = s.discovery.builds.size();
  out.cache_file = probe_cache_file(o.cache_dir);
  if (!lent) note(o, out, "RUNG_SOFTWARE_GPU asks for the software GPU adapter, but: " + lent.error().message);
  RUNG_RETURN_IF_ERROR(check_forced_rung_is_on(o, s.ladder));
  s.can_cache = prepare_cache_dir(o, out);

  FileHashCache hashes(o.cache_dir);
  if (!hashes.ignored_because().empty()) note(o, out, "ignored the model-hash cache, rewritten: " + hashes.ignored_because());
  std::vector<std::string> probe_names;
  for (const auto* m : s.probe_models) probe_names.push_back(m->name);
  auto fingerprint = make_fingerprint({s.build, &s.hw, &s.ladder, &o, probe_names}, hashes);
  if (!fingerprint) return fingerprint.error();
  if (s.can_cache) hashes.save();

  // One prober per cache directory: a second process waits and then reads the first one's answer.
  std::optional<CacheLock> lock;
  if (s.can_cache) {
    // Bounded: the longest a whole probe may take, so a hung holder is named instead of waited for forever.
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        o.probe_deadline * static_cast<int>(s.ladder.size() * s.probe_models.size() + s.spare_probe_models.size() + 1) + std::chrono::seconds(5));
    auto l = CacheLock::acquire(o.cache_dir / "probe.lock", wait, [&](long holder) {
      note(o, out, fmt::format("{} is probing this cache directory; waiting up to {:.0f} s for its answer", describe_process(holder),
                               std::chrono::duration<double>(wait).count()));
    }, o.stop);
    if (!l) return l.error();
    lock.emplace(std::move(*l));
  }
  if (!o.reprobe) {
    auto cached = read_probe_cache(out.cache_file, *fingerprint, rung_names(s.ladder));
    const bool same = same_builds(cached.builds_seen, s.builds_found);
    if (s.warm && !(cached.outcome && same)) {
      again = true;
      return std::optional<ProbeOutcome>(std::move(out));
    }
    if (cached.outcome) {
      // Valid for the build chosen, but made when other builds were found (or
      // before the record was kept): kept again with today's, so that the next launch opens one build.
      if (!same && s.can_cache) {
        ProbeOutcome kept = *cached.outcome;
        kept.from_cache = false;  // as the walk that decided it wrote it
        (void)write_probe_cache(out.cache_file, *fingerprint, kept, s.builds_seen);
      }
      ProbeOutcome hit = std::move(*cached.outcome);
      hit.log.insert(hit.log.begin(), out.log.begin(), out.log.end());
      RUNG_RETURN_IF_ERROR(apply_override(o, s.ladder, hit));
      return std::optional<ProbeOutcome>(std::move(hit));
    }
    if (!cached.ignored_because.empty()) note(o, out, "ignored the cache: " + cached.ignored_because);
  }

  if (walk == nullptr) return std::optional<ProbeOutcome>();
  RUNG_RETURN_IF_ERROR(walk(s, *fingerprint, out));
  if (s.can_cache) {
    if (auto st = write_probe_cache(out.cache_file, *fingerprint, out, s.builds_seen); !st) note(o, out, "could not cache: " + st.error().message);
  }
  RUNG_RETURN_IF_ERROR(apply_override(o, s.ladder, out));
  return std::optional<ProbeOutcome>(std::move(out));
}

Result<std::optional<ProbeOutcome>> decide_unguarded(const ProbeOptions& o, ProbeWalk walk) {
  RUNG_RETURN_IF_ERROR(check_options(o));
  // RUNG_SOFTWARE_GPU=1 lends the software adapter to the workers (before the ladder
  // names its rungs); without it, the probe goes on without.
  const Status lent = lend_software_gpu_if_asked(false, o.runtimes.read_environment);
  bool again = false;
  auto first = probe_once(o, lent, /*allow_warm=*/!o.reprobe, walk, again);
  if (!again || !first) return first;
  // The second go notes all it finds again; a line the first already said is not said twice.
  ProbeOptions cold = o;
  if (o.on_log) {
    cold.on_log = [said = (*first)->log, say = o.on_log](const std::string& line) {
      if (std::find(said.begin(), said.end(), line) == said.end()) say(line);
    };
  }
  return probe_once(cold, lent, /*allow_warm=*/false, walk, again);
}

}  // namespace

Result<std::optional<ProbeOutcome>> decide_probe(const ProbeOptions& o, ProbeWalk walk) {
  try {
    return decide_unguarded(o, walk);
  } catch (const LibraryUnavailable& e) {  // a digest without libcrypto: a reason, at the boundary
    return Error{ErrorCode::kLoadFailed, e.what()};
  }
}

Result<std::optional<ProbeOutcome>> probe_from_cache(const ProbeOptions& options) { return decide_probe(options, nullptr); }

}  // namespace rung
