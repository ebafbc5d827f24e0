#include "probe/outcome.h"

#include <fmt/format.h>

#include "runtime/clean_error.h"

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

Verdict verdict_from(const std::string& s) {
  for (auto v : {Verdict::kTaken, Verdict::kSlower, Verdict::kSlowerWithinNoise, Verdict::kNotPlaced, Verdict::kUnfaithful, Verdict::kFailed, Verdict::kCrashed,
                 Verdict::kTimedOut, Verdict::kRefused, Verdict::kNotTried}) {
    if (s == verdict_name(v)) return v;
  }
  throw nlohmann::json::other_error::create(501, "unknown verdict " + s, nullptr);
}

nlohmann::json rung_json(const RungOutcome& r) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : r.models) models.push_back(measurement_json(m));
  return {{"rung", r.rung}, {"display", r.display}, {"verdict", verdict_name(r.verdict)}, {"reason", r.reason}, {"models", models}};
}

RungOutcome rung_from(const nlohmann::json& j) {
  RungOutcome r;
  r.rung = j.at("rung");
  r.display = j.at("display");
  r.verdict = verdict_from(j.at("verdict"));
  r.reason = j.at("reason");
  for (const auto& m : j.at("models")) {
    Measurement x;
    x.model = m.at("model");
    x.verdict = verdict_from(m.at("verdict"));
    x.reason = m.at("reason");
    x.build_ms = m.at("build_ms");
    x.first_run_ms = m.at("first_run_ms");
    x.median_ms = m.at("median_ms");
    x.floor_median_ms = m.at("floor_median_ms");
    x.max_abs_diff = m.at("max_abs_diff");
    x.max_rel_diff = m.at("max_rel_diff");
    x.ratio_median = m.value("ratio_median", 0.0);
    x.ratio_low = m.value("ratio_low", 0.0);
    x.ratio_high = m.value("ratio_high", 0.0);
    x.pairs = m.value("pairs", 0);
    if (const auto p = m.find("placement"); p != m.end() && p->is_object()) {
      x.placement_known = true;
      x.placed_nodes = p->at("placed_nodes");
      x.total_nodes = p->at("total_nodes");
      x.placed_time_share = p->at("time_share");
      x.placement = p->at("summary");
    }
    r.models.push_back(x);
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
  for (const auto& r : rungs) {
    if (r.verdict == Verdict::kTaken || r.verdict == Verdict::kNotTried) continue;
    line += fmt::format(" · {} {}", r.display, verdict_name(r.verdict));
    if (!r.reason.empty()) line += ": " + brief_reason(r.reason);
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
          {"inputs", ProbeOutcome::kInputsNote},
          {"log", o.log},
          {"cache_file", o.cache_file.string()}};
}

ProbeOutcome outcome_from_json(const nlohmann::json& j) {
  ProbeOutcome o;
  o.chosen = j.at("chosen");
  o.chosen_display = j.at("chosen_display");
  o.forced_by = j.at("forced_by");
  o.fallback = j.at("fallback");
  o.runtime_version = j.at("runtime").at("version");
  o.runtime_library = j.at("runtime").at("library").get<std::string>();
  o.builds_found = j.at("runtime").at("builds_found");
  o.floor = rung_from(j.at("floor"));
  for (const auto& r : j.at("rungs")) o.rungs.push_back(rung_from(r));
  o.model_errors = j.at("model_errors").get<std::vector<std::string>>();
  return o;
}

std::string ProbeOutcome::to_json() const { return outcome_json(*this).dump(2); }

}  // namespace rung
