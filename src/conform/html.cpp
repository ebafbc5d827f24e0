// The conform grid: one self-contained page (no script, no external resource),
// operators down the side with their tests under them, rungs across, one cell
// per test and rung coloured by its outcome; the reason is the cell's tooltip.
#include <fmt/format.h>

#include <map>

#include "core/html_text.h"
#include "rung/conform.h"

namespace rung {
namespace {

struct Style {
  const char* outcome;
  const char* css;     // class name
  const char* colour;
  const char* mark;    // what the cell says
};

constexpr Style kStyles[] = {
    {"pass", "pass", "#2e7d32", "pass"},
    {"mismatch", "mismatch", "#c62828", "≠"},
    {"not placed", "notplaced", "#78909c", "cpu"},
    {"runtime refused", "refused", "#ef6c00", "refused"},
    {"rung cannot feed it", "cannotfeed", "#6a1b9a", "feed"},
    {"timed out", "timedout", "#f9a825", "time"},
    {"crashed", "crashed", "#212121", "crash"},
    {"skipped", "skipped", "#bdbdbd", "–"},
};

const Style& style_of(const std::string& outcome) {
  for (const auto& s : kStyles) {
    if (outcome == s.outcome) return s;
  }
  return kStyles[7];
}

std::string cell(const ConformColumn& column, const ConformResult& r, const ConformTest& t) {
  if (!column.unavailable.empty()) {
    return fmt::format("<td class=\"cell unavailable\" title=\"{}\">n/a</td>", html_escape("the rung could not start: " + column.unavailable));
  }
  const ConformResult& shown = t.skipped.empty() ? r : ConformResult{"skipped", t.skipped, 0, 0, 0, 0, {}};
  const Style& s = style_of(shown.outcome);
  std::string tip = shown.outcome;
  if (!shown.reason.empty()) tip += ": " + shown.reason;
  if (shown.outcome == "pass" || shown.outcome == "mismatch") tip += fmt::format(" · max abs {:.3g}, max rel {:.3g}", shown.max_abs, shown.max_rel);
  return fmt::format("<td class=\"cell {}\" data-outcome=\"{}\" title=\"{}\">{}</td>", s.css, html_escape(shown.outcome), html_escape(tip), s.mark);
}

}  // namespace

std::string ConformReport::to_html() const {
  std::string css;
  for (const auto& s : kStyles) css += fmt::format("td.{0}, span.{0} {{ background: {1}; color: #fff; }}\n", s.css, s.colour);
  std::string out = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rung conform</title>
<style>
body {{ font: 13px/1.35 system-ui, sans-serif; margin: 16px; color: #222; }}
table {{ border-collapse: collapse; }}
th, td {{ padding: 1px 6px; border: 1px solid #fff; }}
th {{ background: #eceff1; text-align: left; position: sticky; top: 0; }}
td.test {{ font-family: monospace; color: #444; }}
tr.op td {{ background: #fafafa; font-weight: 600; padding-top: 6px; border-top: 1px solid #ccc; }}
td.cell {{ text-align: center; min-width: 64px; font-size: 11px; }}
td.unavailable {{ background: repeating-linear-gradient(45deg, #e0e0e0, #e0e0e0 4px, #f5f5f5 4px, #f5f5f5 8px); color: #666; }}
span.key {{ display: inline-block; padding: 1px 6px; margin: 0 4px 4px 0; }}
td.skipped, span.skipped {{ color: #333; }}
{}</style></head><body>
<h1>rung conform</h1>
<p>{} tests · tolerance {} (atol {:g}, rtol {:g})</p>
<p>)",
                                css, tests.size(), html_escape(tolerance_name), tolerance.atol, tolerance.rtol);
  for (const auto& s : kStyles) out += fmt::format("<span class=\"key {}\">{} {}</span>", s.css, s.mark, html_escape(s.outcome));
  out += "</p>\n<table>\n<thead><tr><th>operator / test</th>";
  for (const auto& c : columns) out += fmt::format("<th title=\"{}\">{}</th>", html_escape(c.runtime_library.string()), html_escape(c.label));
  out += "</tr>\n<tr><th>passed</th>";
  for (const auto& c : columns) {
    if (!c.unavailable.empty()) {
      out += fmt::format("<th>unavailable: {}</th>", html_escape(c.unavailable));
    } else {
      const auto counts = c.counts();
      out += fmt::format("<th>{} of {}</th>", counts.at("pass"), tests.size() - skipped());
    }
  }
  out += "</tr></thead>\n<tbody>\n";
  // Tests by operator, operators by name; a test keeps its id order inside its operator.
  std::map<std::string, std::vector<std::size_t>> by_op;
  for (std::size_t i = 0; i < tests.size(); ++i) by_op[tests[i].op.empty() ? "(not run)" : tests[i].op].push_back(i);
  for (const auto& [op, indices] : by_op) {
    out += fmt::format("<tr class=\"op\"><td colspan=\"{}\">{}</td></tr>\n", columns.size() + 1, html_escape(op));
    for (std::size_t i : indices) {
      out += fmt::format("<tr><td class=\"test\">{}</td>", html_escape(tests[i].id));
      for (const auto& c : columns) out += cell(c, c.results.empty() ? ConformResult{} : c.results[i], tests[i]);
      out += "</tr>\n";
    }
  }
  out += "</tbody></table>\n</body></html>\n";
  return out;
}

}  // namespace rung
