// The conform grid: one self-contained page (no script, no external resource).
// Above it the run, the rungs that could not start (one note, not columns) and
// the legend (each outcome once). Rungs across, the CPU's first; down the side
// a row per operator with its counts per rung: operators with problems first,
// then those left to the CPU, those that pass and those not run, each of the
// last three folded. An operator's row opens (<details>, no script) on its
// tests, one cell per test and rung coloured by its outcome; the reason is the
// cell's tooltip.
#include <fmt/format.h>

#include <map>

#include "core/html_text.h"
#include "rung/conform.h"

namespace rung {
namespace {

struct Style {
  const char* outcome;
  const char* css;      // class name
  const char* colour;
  const char* meaning;  // the legend's
};

constexpr Style kStyles[] = {
    {"pass", "pass", "#2e7d32", "every output matched ONNX's expected one"},
    {"mismatch", "mismatch", "#c62828", "it ran, and an output differs beyond the tolerance"},
    {"not placed", "notplaced", "#78909c", "the rung's provider ran none of its nodes (the CPU did)"},
    {"runtime refused", "refused", "#ef6c00", "ONNX Runtime would not load or run it (its reason in the tooltip)"},
    {"rung cannot feed it", "cannotfeed", "#6a1b9a", "rung could not build an input or read an expected output"},
    {"timed out", "timedout", "#f9a825", "no answer within the deadline: the worker was killed"},
    {"crashed", "crashed", "#212121", "the worker died"},
    {"skipped", "skipped", "#bdbdbd", "not run: a download stub, or no data set"},
};

// The group's band (the summary rows' background) and its heading.
struct Group {
  const char* name;
  const char* css;
  const char* band;
  const char* heading;  // "{n} operator(s) {heading}"
};

constexpr Group kGroups[] = {
    {"problem", "problem", "#fdecea", "with problems: a test that did not pass on some rung"},
    {"not placed", "notplaced", "#eceff1", "left to the CPU on some rung, and passing where they ran"},
    {"pass", "pass", "#edf5e9", "passing on every rung"},
    {"skipped", "skipped", "#f5f5f5", "not run: download stubs or no data set"},
};

const Style& style_of(const std::string& outcome) {
  for (const auto& s : kStyles) {
    if (outcome == s.outcome) return s;
  }
  return kStyles[7];
}

std::string plural(std::size_t n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

std::string chip(const std::string& outcome, int n) {
  const Style& s = style_of(outcome);
  return fmt::format("<span class=\"n {}\" title=\"{}: {}\">{} {}</span>", s.css, html_escape(outcome), plural(static_cast<std::size_t>(n), "test", "tests"), n,
                     html_escape(outcome));
}

// Counts in the order outcomes are listed, skipped last; none for an outcome no test had.
std::string chips(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& s : kStyles) {
    if (auto it = counts.find(s.outcome); it != counts.end() && it->second > 0) out += chip(s.outcome, it->second);
  }
  return out;
}

std::string cell(const ConformResult& r, const ConformTest& t) {
  const ConformResult& shown = t.skipped.empty() ? r : ConformResult{"skipped", t.skipped, 0, 0, 0, 0, {}};
  const Style& s = style_of(shown.outcome);
  std::string tip = shown.outcome;
  if (!shown.reason.empty()) tip += ": " + shown.reason;
  if (shown.outcome == "pass" || shown.outcome == "mismatch") tip += fmt::format(" · max abs {:.3g}, max rel {:.3g}", shown.max_abs, shown.max_rel);
  return fmt::format("<div class=\"cell {}\" data-outcome=\"{}\" title=\"{}\">{}</div>", s.css, html_escape(shown.outcome), html_escape(tip),
                     html_escape(shown.outcome));
}

}  // namespace

std::string ConformReport::to_html() const {
  const auto shown = shown_columns();
  std::string css;
  for (const auto& s : kStyles) css += fmt::format(".cell.{0}, .n.{0}, .key.{0} {{ background: {1}; color: #fff; }}\n", s.css, s.colour);
  for (const auto& g : kGroups) css += fmt::format("details.op.{0} > summary, h2.{0}, details.group.{0} > summary {{ background: {1}; }}\n", g.css, g.band);
  std::vector<std::string> suite_names;
  for (const auto& s : suites) suite_names.push_back(html_escape(s.string()));
  std::string suites_text;
  for (std::size_t i = 0; i < suite_names.size(); ++i) suites_text += (i ? ", " : "") + suite_names[i];
  std::string out = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rung conform</title>
<style>
body {{ font: 13px/1.35 system-ui, sans-serif; margin: 16px; color: #222; }}
h1 {{ font-size: 20px; margin: 0 0 4px; }}
p.meta {{ margin: 2px 0; color: #444; }}
div.note {{ margin: 8px 0; padding: 4px 8px; border-left: 4px solid #9e9e9e; background: #fafafa; color: #444; }}
div.note p {{ margin: 2px 0; }}
ul.legend {{ list-style: none; padding: 0; margin: 8px 0 12px; display: flex; flex-wrap: wrap; gap: 4px 16px; }}
span.key, span.n {{ display: inline-block; padding: 0 6px; border-radius: 3px; white-space: nowrap; }}
span.n {{ margin: 1px 4px 1px 0; font-size: 12px; }}
.key.skipped, .n.skipped, .cell.skipped {{ color: #222; }}
div.grid {{ --cols: minmax(200px, 340px) repeat({}, minmax(0, 1fr)); }}
.row {{ display: grid; grid-template-columns: var(--cols); border-bottom: 1px solid #fff; }}
.row > div {{ padding: 2px 6px; overflow: hidden; text-overflow: ellipsis; }}
.row.head {{ position: sticky; top: 0; z-index: 1; background: #fff; }}
.row.head > div {{ background: #eceff1; font-weight: 600; border-right: 2px solid #fff; }}
.row.head > div.rung.cpu {{ background: #d6e6f5; }}
.row.head small, summary small {{ display: block; font-weight: 400; color: #555; }}
summary {{ cursor: pointer; list-style: none; }}
summary::-webkit-details-marker {{ display: none; }}
details.op > summary > div.name::before, details.group > summary::before {{ content: "▸ "; }}
details.op[open] > summary > div.name::before, details.group[open] > summary::before {{ content: "▾ "; }}
details.op > summary > div.name {{ font-weight: 600; }}
details.op > summary > div.name small {{ display: inline; margin-left: 6px; }}
h2, details.group > summary {{ font-size: 14px; margin: 10px 0 2px; padding: 3px 6px; font-weight: 600; }}
details.group > div {{ margin-left: 0; }}
.row.test > div.name {{ font-family: monospace; color: #444; padding-left: 22px; white-space: nowrap; }}
div.cell {{ text-align: center; font-size: 11px; border-right: 2px solid #fff; white-space: nowrap; }}
{}</style></head><body>
<h1>rung conform</h1>
<p class="meta">{} in {} ({} run, {} skipped: download stubs or no data set) · tolerance {} (atol {:g}, rtol {:g})</p>
)",
                                shown.size(), css, plural(tests.size(), "test", "tests"), suites_text, tests.size() - skipped(), skipped(),
                                html_escape(tolerance_name), tolerance.atol, tolerance.rtol);
  const auto ops = operators();
  std::map<std::string, std::size_t> in_group;
  for (const auto& op : ops) ++in_group[op.group];
  out += fmt::format("<p class=\"meta\">{}: {} with problems, {} left to the CPU on some rung, {} passing on every rung, {} skipped</p>\n",
                     plural(ops.size(), "operator", "operators"), in_group["problem"], in_group["not placed"], in_group["pass"], in_group["skipped"]);
  if (const auto note = unavailable_note(); !note.empty()) {
    out += "<div class=\"note\" id=\"unavailable\">";
    for (const auto& line : note) out += fmt::format("<p>{}</p>", html_escape(line));
    out += "</div>\n";
  }
  if (shown.empty()) out += "<p class=\"meta\">No rung could start: no test ran.</p>\n";
  out += "<ul class=\"legend\">";
  for (const auto& s : kStyles) out += fmt::format("<li><span class=\"key {}\">{}</span> {}</li>", s.css, html_escape(s.outcome), html_escape(s.meaning));
  out += "</ul>\n";

  out += "<div class=\"grid\">\n<div class=\"row head\"><div class=\"name\">operator<small>its tests, when opened</small></div>";
  for (std::size_t k : shown) {
    const ConformColumn& c = columns[k];
    std::string options;
    for (const auto& [key, value] : c.provider_options) options += fmt::format("{}{}={}", options.empty() ? "" : ", ", key, value);
    const auto counts = c.counts();
    out += fmt::format("<div class=\"rung{}\" title=\"{}\">{}{}<small>{} of {} passed</small><div class=\"counts\">{}</div></div>",
                       c.rung == "cpu" ? " cpu" : "", html_escape(c.runtime_library.string()), html_escape(c.label),
                       options.empty() ? "" : fmt::format("<small>{}</small>", html_escape(options)), counts.at("pass"), tests.size() - skipped(),
                       chips(counts));
  }
  out += "</div>\n";
  for (const auto& g : kGroups) {
    std::vector<const ConformOperator*> members;
    std::size_t test_count = 0;
    for (const auto& op : ops) {
      if (op.group == g.name) {
        members.push_back(&op);
        test_count += op.tests.size();
      }
    }
    if (members.empty()) continue;
    const std::string heading = fmt::format("{} {} ({})", plural(members.size(), "operator", "operators"), g.heading, plural(test_count, "test", "tests"));
    // Problems are shown; every other group is folded.
    if (std::string(g.name) == "problem") {
      out += fmt::format("<h2 class=\"{}\">{}</h2>\n", g.css, html_escape(heading));
    } else {
      out += fmt::format("<details class=\"group {}\"><summary>{}</summary><div>\n", g.css, html_escape(heading));
    }
    for (const ConformOperator* op : members) {
      out += fmt::format("<details class=\"op {}\"><summary class=\"row\"><div class=\"name\" title=\"{}\">{}<small>{}</small></div>", g.css,
                         html_escape(op->name), html_escape(op->name), plural(op->tests.size(), "test", "tests"));
      for (std::size_t k : shown) out += fmt::format("<div class=\"counts\">{}</div>", chips(op->counts[k]));
      out += "</summary>\n";
      for (std::size_t i : op->tests) {
        out += fmt::format("<div class=\"row test\"><div class=\"name\" title=\"{0}\">{0}</div>", html_escape(tests[i].id));
        for (std::size_t k : shown) out += cell(i < columns[k].results.size() ? columns[k].results[i] : ConformResult{"skipped", "", 0, 0, 0, 0, {}}, tests[i]);
        out += "</div>\n";
      }
      out += "</details>\n";
    }
    if (std::string(g.name) != "problem") out += "</div></details>\n";
  }
  out += "</div>\n</body></html>\n";
  return out;
}

}  // namespace rung
