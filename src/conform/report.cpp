// The conform report as text (a summary per rung, the tests that did not pass)
// and as a JSON record (schemas/conform-record.schema.json).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "jobs/conform_case.h"
#include "os/atomic_file.h"
#include "rung/json_text.h"
#include "os/utc_now.h"
#include "rung/conform.h"
#include "rung/ladder.h"
#include "rung/rung_names.h"
#include "runtime/plugin_rungs.h"

namespace rung {
namespace {

constexpr int kSchemaVersion = 1;

// The short header of a table column: "cannot feed" for "rung cannot feed it".
std::string header_of(const std::string& outcome) { return outcome == "rung cannot feed it" ? "cannot feed" : outcome; }

// An outcome that makes its operator a problem: the test did not pass and not because the CPU ran it instead.
bool is_problem(const std::string& outcome) { return outcome != "pass" && outcome != "not placed" && outcome != "skipped"; }

int group_rank(const std::string& group) { return group == "problem" ? 0 : group == "not placed" ? 1 : group == "pass" ? 2 : 3; }

// A rung's name for the note on rungs that could not start: its display name ("CUDA", "rung_sim_ep").
std::string short_name(const ConformColumn& c) { return c.display.empty() ? rung_display_name(c.rung) : c.display; }

}  // namespace

const std::vector<std::string>& conform_outcomes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto o : kConformOutcomes) {
      if (o != ConformOutcome::kSkipped) out.emplace_back(conform_outcome_name(o));
    }
    return out;
  }();
  return names;
}

Result<ConformRung> ConformRung::parse(const std::string& spec) {
  ConformRung r;
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t comma; (comma = spec.find(',', start)) != std::string::npos; start = comma + 1) parts.push_back(spec.substr(start, comma - start));
  parts.push_back(spec.substr(start));
  if (parts[0].empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': a rung spec starts with the rung's name", spec)};
  // A ladder rung's id or display name in any case is the rung's id; a plugin library stays a path.
  if (std::string why = unknown_rung_reason(parts[0]); !why.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': {}", spec, why)};
  r.rung = names_a_plugin_library(parts[0]) ? parts[0] : canonical_rung_name(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    const std::string key = parts[i].substr(0, eq), value = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    if (eq != std::string::npos && key == "ort" && !value.empty()) {
      r.runtime = value;
    } else if (eq != std::string::npos && key.starts_with("option.") && key.size() > 7) {
      r.provider_options[key.substr(7)] = value;
    } else {
      return Error{ErrorCode::kInvalidArgument, fmt::format("'{}': expected ort=VERSION or option.KEY=VALUE after the rung, not '{}'", spec, parts[i])};
    }
  }
  return r;
}

std::map<std::string, int> ConformColumn::counts() const {
  std::map<std::string, int> out;
  for (const auto& name : conform_outcomes()) out[name] = 0;
  for (const auto& r : results) {
    if (r.outcome != "skipped") ++out[r.outcome];
  }
  return out;
}

std::size_t ConformReport::skipped() const {
  std::size_t n = 0;
  for (const auto& t : tests) n += t.skipped.empty() ? 0 : 1;
  return n;
}

std::vector<ConformOperator> ConformReport::operators() const {
  std::map<std::string, std::vector<std::size_t>> by_op;
  for (std::size_t i = 0; i < tests.size(); ++i) by_op[tests[i].op.empty() ? "(not run)" : tests[i].op].push_back(i);
  std::vector<ConformOperator> out;
  for (const auto& [name, indices] : by_op) {
    ConformOperator op;
    op.name = name;
    op.tests = indices;
    bool problem = false, not_placed = false, ran = false;
    for (const auto& c : columns) {
      std::map<std::string, int> n;
      for (std::size_t i : indices) {
        if (!c.unavailable.empty()) continue;
        const std::string outcome = tests[i].skipped.empty() && i < c.results.size() ? c.results[i].outcome : "skipped";
        ++n[outcome];
        problem = problem || is_problem(outcome);
        not_placed = not_placed || outcome == "not placed";
        ran = ran || outcome != "skipped";
      }
      op.counts.push_back(std::move(n));
    }
    op.group = problem ? "problem" : not_placed ? "not placed" : ran ? "pass" : "skipped";
    out.push_back(std::move(op));
  }
  std::stable_sort(out.begin(), out.end(), [](const ConformOperator& a, const ConformOperator& b) { return group_rank(a.group) < group_rank(b.group); });
  return out;
}

std::vector<std::size_t> ConformReport::shown_columns() const {
  std::vector<std::size_t> out;
  for (int cpu = 1; cpu >= 0; --cpu) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].unavailable.empty() && (columns[i].rung == "cpu") == (cpu == 1)) out.push_back(i);
    }
  }
  return out;
}

std::vector<std::string> ConformReport::unavailable_note() const {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;  // in the order asked
  bool several_builds = false;
  for (const auto& c : columns) several_builds = several_builds || c.runtime_version != columns.front().runtime_version;
  for (const auto& c : columns) {
    if (c.unavailable.empty()) continue;
    std::string name = short_name(c);
    if (several_builds) name += fmt::format(" (ONNX Runtime {})", c.runtime_version);
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& r) { return r.first == c.unavailable; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {c.unavailable, {}});
    if (std::find(it->second.begin(), it->second.end(), name) == it->second.end()) it->second.push_back(name);
  }
  std::vector<std::string> out;
  for (const auto& [reason, names] : by_reason) out.push_back(fmt::format("{}: not available here — {}", fmt::join(names, ", "), reason));
  return out;
}

std::string ConformReport::table() const {
  std::vector<std::string> suite_names;
  for (const auto& s : suites) suite_names.push_back(s.string());
  std::string out = fmt::format("{} tests in {} ({} run, {} skipped: download stubs or no data set) · tolerance {} (atol {:g}, rtol {:g})\n\n",
                                tests.size(), fmt::join(suite_names, ", "), tests.size() - skipped(), skipped(), tolerance_name,
                                tolerance.atol, tolerance.rtol);
  std::size_t width = 4;
  const auto shown = shown_columns();
  for (std::size_t k : shown) width = std::max(width, columns[k].label.size());
  if (!shown.empty()) {
    out += fmt::format("  {:<{}}", "rung", width);
    for (const auto& name : conform_outcomes()) out += fmt::format("  {:>{}}", header_of(name), std::max<std::size_t>(header_of(name).size(), 5));
    out += "\n";
  }
  for (std::size_t k : shown) {
    const ConformColumn& c = columns[k];
    out += fmt::format("  {:<{}}", c.label, width);
    const auto counts = c.counts();
    for (const auto& name : conform_outcomes()) {
      out += fmt::format("  {:>{}}", counts.at(name), std::max<std::size_t>(header_of(name).size(), 5));
    }
    out += "\n";
  }
  for (const auto& line : unavailable_note()) out += fmt::format("  {}\n", line);
  // The grid's rows, counted as the grid groups them.
  std::map<std::string, int> groups;
  std::vector<std::string> problems;
  for (const auto& op : operators()) {
    ++groups[op.group];
    if (op.group == "problem") problems.push_back(op.name);
  }
  std::string named;
  if (!problems.empty()) {
    const std::size_t listed = std::min<std::size_t>(problems.size(), 12);
    named = fmt::format(" ({}{})", fmt::join(problems.begin(), problems.begin() + static_cast<std::ptrdiff_t>(listed), ", "),
                        problems.size() > listed ? fmt::format(" and {} more", problems.size() - listed) : "");
  }
  const int ops = groups["problem"] + groups["not placed"] + groups["pass"] + groups["skipped"];
  out += fmt::format("\n  {} operator{}: {} with problems{}, {} left to the CPU on some rung, {} passing on every rung, {} skipped\n", ops,
                     ops == 1 ? "" : "s", groups["problem"], named, groups["not placed"], groups["pass"], groups["skipped"]);
  return out;
}

std::string ConformReport::details(const std::string& column_id) const {
  std::string out;
  for (const auto& c : columns) {
    if (!column_id.empty() && c.id != column_id) continue;
    if (!c.unavailable.empty()) continue;
    out += fmt::format("{}\n", c.label);
    for (std::size_t i = 0; i < tests.size(); ++i) {
      const ConformResult& r = c.results[i];
      if (r.outcome == "pass" || r.outcome == "skipped") continue;
      out += fmt::format("  {:<16} {}: {}\n", r.outcome, tests[i].id, r.reason);
    }
  }
  return out;
}

std::string ConformReport::to_json(const std::string& command_line) const {
  nlohmann::json cols = nlohmann::json::array();
  for (const auto& c : columns) {
    cols.push_back({{"id", c.id},
                    {"label", c.label},
                    {"rung", rung_id(c.rung)},  // the id, a plugin's too (rung/rung_names.h)
                    {"display", c.display},
                    {"provider", c.provider},
                    {"provider_options", c.provider_options},
                    {"runtime", {{"version", c.runtime_version}, {"library", c.runtime_library.string()}}},
                    {"unavailable", c.unavailable.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.unavailable)},
                    {"counts", c.unavailable.empty() ? nlohmann::json(c.counts()) : nlohmann::json(nullptr)}});
  }
  nlohmann::json tests_json = nlohmann::json::array();
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const ConformTest& t = tests[i];
    nlohmann::json results = nlohmann::json::object();
    for (const auto& c : columns) {
      if (!c.unavailable.empty() || !t.skipped.empty()) continue;
      const ConformResult& r = c.results[i];
      nlohmann::json placement = nlohmann::json::array();
      for (const auto& [p, n] : r.placement) placement.push_back({{"provider", p}, {"nodes", n}});
      auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
      results[c.id] = {{"outcome", r.outcome}, {"reason", r.reason}, {"max_abs", finite_or_null(r.max_abs)}, {"max_rel", finite_or_null(r.max_rel)},
                       {"data_sets", r.data_sets}, {"ms", r.ms}, {"placement", placement}};
    }
    tests_json.push_back({{"id", t.id}, {"suite", t.suite}, {"operator", t.op}, {"dir", t.dir.string()},
                          {"skipped", t.skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.skipped)}, {"results", results}});
  }
  nlohmann::json suite_list = nlohmann::json::array();
  for (const auto& s : suites) suite_list.push_back(s.string());
  nlohmann::json j = {{"schema", "rung-conform-record"},
                      {"schema_version", kSchemaVersion},
                      {"provenance", {{"measured", utc_now()}, {"command", command_line}, {"rung_version", RUNG_VERSION}}},
                      {"suites", suite_list},
                      {"tolerance", {{"name", tolerance_name}, {"atol", tolerance.atol}, {"rtol", tolerance.rtol}, {"nan_equal", tolerance.nan_equal}}},
                      {"outcomes", conform_outcomes()},
                      {"columns", cols},
                      {"tests", tests_json}};
  return json_text(j, 1);  // text that is not UTF-8 is replaced, never a throw
}

Status ConformReport::write_json(const std::filesystem::path& path, const std::string& command_line) const {
  return write_file_atomically(path, to_json(command_line));
}

Status ConformReport::write_html(const std::filesystem::path& path) const { return write_file_atomically(path, to_html()); }

}  // namespace rung
