#include "probe/outcome.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "os/json_input.h"
#include "rung/json_text.h"
#include "runtime/clean_error.h"
#include "rung/path_text.h"

namespace rung {
namespace {

nlohmann::json measurement_json(const Measurement& m) {
  return {{"model", m.model},       {"verdict", verdict_name(m.verdict)}, {"reason", m.reason},
          {"build_ms", m.build_ms}, {"first_run_ms", m.first_run_ms},     {"median_ms", m.median_ms},
          {"floor_median_ms", m.floor_median_ms}, {"ratio", m.ratio()},   {"max_abs_diff", m.max_abs_diff},
          {"max_rel_diff", m.max_rel_diff},
          {"ratio_median", m.ratio_median},
          {"ratio_low", m.ratio_low},
          {"ratio_high", m.ratio_high},
          {"pairs", m.pairs},
          {"placement", m.placement_known ? nlohmann::json{{"placed_nodes", m.placed_nodes},
                                                           {"total_nodes", m.total_nodes},
                                                           {"placed_share", m.placed_share()},
                                                           {"time_share", m.placed_time_share},
                                                           {"summary", m.placement}}
                                          : nlohmann::json(nullptr)}};
}

// Bounds on what a cache may hold: more than these is not a probe's outcome.
constexpr std::size_t kMaxRungs = 64, kMaxModels = 1000, kMaxLines = 1000;

Verdict verdict_from(JsonFields& f) {
  const std::string s = f.text("verdict");
  for (auto v : {Verdict::kTaken, Verdict::kSlower, Verdict::kSlowerWithinNoise, Verdict::kNotPlaced, Verdict::kUnfaithful, Verdict::kFailed, Verdict::kCrashed,
                 Verdict::kTimedOut, Verdict::kRefused, Verdict::kNotTried}) {
    if (s == verdict_name(v)) return v;
  }
  f.require(false, fmt::format("unknown verdict '{}'", s.substr(0, 40)));
  return Verdict::kFailed;
}

// A time or difference: finite and not negative.
double measure(JsonFields& f, const std::string& key) {
  const double v = f.number(key);
  f.require(v >= 0, fmt::format("'{}' is negative", key));
  return v;
}

Result<Measurement> measurement_from(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  Measurement x;
  x.model = f.text("model");
  x.verdict = verdict_from(f);
  x.reason = f.text("reason");
  x.build_ms = measure(f, "build_ms");
  x.first_run_ms = measure(f, "first_run_ms");
  x.median_ms = measure(f, "median_ms");
  x.floor_median_ms = measure(f, "floor_median_ms");
  x.max_abs_diff = measure(f, "max_abs_diff");
  x.max_rel_diff = measure(f, "max_rel_diff");
  f.skip("ratio");  // derived
  // The paired speed rule's figures, absent from caches written before it.
  x.ratio_median = f.number("ratio_median", 0.0);
  x.ratio_low = f.number("ratio_low", 0.0);
  x.ratio_high = f.number("ratio_high", 0.0);
  x.pairs = static_cast<int>(f.integer("pairs", 0, 0, 1'000'000));
  if (const nlohmann::json* p = f.object("placement", /*required=*/false)) {
    JsonFields pf(*p, where + ": placement");
    x.placement_known = true;
    x.placed_nodes = static_cast<int>(pf.integer("placed_nodes", 0, 1'000'000));
    x.total_nodes = static_cast<int>(pf.integer("total_nodes", 0, 1'000'000));
    x.placed_time_share = pf.number("time_share");
    x.placement = pf.text("summary");
    pf.skip("placed_share");  // derived
    pf.require(x.placed_nodes <= x.total_nodes, "more nodes placed than the model has");
    RUNG_RETURN_IF_ERROR(pf.finish());
  }
  RUNG_RETURN_IF_ERROR(f.finish());
  return x;
}

nlohmann::json rung_json(const RungOutcome& r) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : r.models) models.push_back(measurement_json(m));
  return {{"rung", r.rung}, {"display", r.display}, {"verdict", verdict_name(r.verdict)}, {"reason", r.reason}, {"models", models}};
}

Result<RungOutcome> rung_from(const nlohmann::json& j, const std::string& where) {
  JsonFields f(j, where);
  RungOutcome r;
  r.rung = f.text("rung");
  r.display = f.text("display");
  r.verdict = verdict_from(f);
  r.reason = f.text("reason");
  f.require(!r.rung.empty(), "names no rung");
  const nlohmann::json* models = f.array("models", kMaxModels);
  RUNG_RETURN_IF_ERROR(f.finish());
  for (std::size_t i = 0; i < models->size(); ++i) {
    auto m = measurement_from((*models)[i], fmt::format("{}: model {}", where, i + 1));
    if (!m) return m.error();
    r.models.push_back(std::move(*m));
  }
  return r;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kTaken: return "taken";
    case Verdict::kSlower: return "slower";
    case Verdict::kSlowerWithinNoise: return "slower (within noise)";
    case Verdict::kNotPlaced: return "not placed";
    case Verdict::kUnfaithful: return "unfaithful";
    case Verdict::kFailed: return "failed";
    case Verdict::kCrashed: return "crashed";
    case Verdict::kTimedOut: return "timed out";
    case Verdict::kRefused: return "refused";
    case Verdict::kNotTried: return "not tried";
  }
  return "?";
}

std::string ProbeOutcome::about_line() const {
  std::string line = chosen_display;
  if (!forced_by.empty()) line += fmt::format(" (forced by {})", forced_by);
  line += fmt::format(" · ONNX Runtime {}", runtime_version);
  // A summary, not the table again: each verdict once, in ladder order, with its count
  // ("3 rungs failed"), or the rung's name when it is the only one ("rung_sim_ep unfaithful").
  // The reasons are in the rows (and in the JSON's rungs), each said there.
  std::vector<std::pair<Verdict, std::vector<std::string>>> by_verdict;
  for (const auto& r : rungs) {
    if (r.verdict == Verdict::kTaken || r.verdict == Verdict::kNotTried) continue;
    auto it = std::find_if(by_verdict.begin(), by_verdict.end(), [&](const auto& v) { return v.first == r.verdict; });
    if (it == by_verdict.end()) it = by_verdict.insert(by_verdict.end(), {r.verdict, {}});
    it->second.push_back(r.display);
  }
  for (const auto& [verdict, names] : by_verdict) {
    line += names.size() == 1 ? fmt::format(" · {} {}", names.front(), verdict_name(verdict))
                              : fmt::format(" · {} rungs {}", names.size(), verdict_name(verdict));
  }
  return line;
}

nlohmann::json outcome_json(const ProbeOutcome& o) {
  nlohmann::json rungs = nlohmann::json::array();
  for (const auto& r : o.rungs) rungs.push_back(rung_json(r));
  return {{"about", o.about_line()},
          {"chosen", o.chosen},
          {"chosen_display", o.chosen_display},
          {"forced_by", o.forced_by},
          {"fallback", o.fallback},
          {"from_cache", o.from_cache},
          {"runtime", {{"version", o.runtime_version}, {"library", o.runtime_library.string()}, {"builds_found", o.builds_found}}},
          {"floor", rung_json(o.floor)},
          {"rungs", rungs},
          {"model_errors", o.model_errors},
          {"inputs_refused", o.inputs_refused},
          {"model_unloadable", o.model_unloadable},
          {"inputs", ProbeOutcome::kInputsNote},
          {"log", o.log},
          {"cache_file", o.cache_file.string()}};
}

Result<ProbeOutcome> outcome_from_json(const nlohmann::json& j) {
  JsonFields f(j, "outcome");
  ProbeOutcome o;
  o.chosen = f.text("chosen");
  o.chosen_display = f.text("chosen_display");
  o.forced_by = f.text("forced_by");
  o.fallback = f.text("fallback");
  o.from_cache = f.flag("from_cache", false);
  const nlohmann::json* runtime = f.object("runtime");
  const nlohmann::json* floor = f.object("floor");
  const nlohmann::json* rungs = f.array("rungs", kMaxRungs);
  o.model_errors = f.text_list("model_errors", kMaxLines);
  o.inputs_refused = f.flag("inputs_refused", false);
  o.model_unloadable = f.flag("model_unloadable", false);
  for (const char* derived : {"about", "log", "cache_file", "inputs"}) f.skip(derived);
  RUNG_RETURN_IF_ERROR(f.finish());

  JsonFields rt(*runtime, "outcome: runtime");
  o.runtime_version = rt.text("version");
  o.runtime_library = path_from_utf8(rt.text("library"));
  o.builds_found = static_cast<std::size_t>(rt.integer("builds_found", 0, 100'000));
  RUNG_RETURN_IF_ERROR(rt.finish());
  auto fl = rung_from(*floor, "outcome: floor");
  if (!fl) return fl.error();
  o.floor = std::move(*fl);
  for (std::size_t i = 0; i < rungs->size(); ++i) {
    auto r = rung_from((*rungs)[i], fmt::format("outcome: rung {}", i + 1));
    if (!r) return r.error();
    o.rungs.push_back(std::move(*r));
  }
  return o;
}

// The outcome as a command prints it: the document the cache and the engine's decision embed, named.
std::string ProbeOutcome::to_json() const {
  nlohmann::json j = outcome_json(*this);
  j["schema"] = "rung-probe-outcome";
  j["schema_version"] = 1;
  return json_text(j, 2);
}

}  // namespace rung
