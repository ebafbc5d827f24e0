#include "rung/bench_html.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "bench/ms_text.h"
#include "core/html_text.h"
#include "os/atomic_file.h"
#include "rung/ratio_text.h"

namespace rung {
namespace {

std::string ms(double v) { return ms_text(v); }
std::string ms(const std::optional<double>& v) { return v ? ms_text(*v) : "–"; }

// A number for a rung that computes something else is never shown bare.
std::string marked(const BenchRow& r, const std::string& text) {
  return r.computes_something_else() ? "<span class=\"else\" title=\"outputs differ from the CPU's\">≠&nbsp;" + text + "</span>" : text;
}

std::string verdict_text(const BenchRow& r) {
  switch (r.match) {
    case OutputMatch::kReference: return "floor · reference";
    case OutputMatch::kMatch: return fmt::format("match (max abs {:.2g})", r.max_abs_diff);
    case OutputMatch::kMismatch: return fmt::format("MISMATCH (max abs {:.2g}): computes something else", r.max_abs_diff);
    case OutputMatch::kNotCompared: {
      std::string reason = r.failure_reason.size() > 90 ? r.failure_reason.substr(0, 87) + "..." : r.failure_reason;
      return fmt::format("failed ({}): {}", r.failure_class, reason);
    }
  }
  return "";
}

// "0.76× [0.71–0.80]", or "–".
std::string ratio_text(const std::optional<PairedRatio>& p) {
  return p ? ratio_cell(p->ratio, p->low, p->high) : "–";
}

// "212/418 61%": nodes the rung's provider ran, and their share of kernel time.
std::string placed_text(const BenchRow& r) {
  return r.placement ? fmt::format("{}/{} {:.0f}%", r.placement->placed_nodes, r.placement->total_nodes, r.placement->time_share * 100) : "–";
}

// "CPU", or "CPU · i8" when the model has several forms.
std::string row_label(const BenchModelReport& m, const BenchRow& r) {
  return m.forms.size() > 1 ? r.display + " · " + r.model_form : r.display;
}

const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2330; background: #ffffff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 6px; }
.env, .model-facts { color: #4a5366; margin: 2px 0; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #dde2ea; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td.text { text-align: left; }
td.text { white-space: normal; }
tr.notes td { font-size: 12px; color: #4a5366; border-bottom: 1px solid #dde2ea; padding-top: 0; }
tr.row td { border-bottom: none; } tr.row.failed td { border-bottom: 1px solid #dde2ea; }
tr.failed td { color: #7a8194; }
tr.mismatch td { background: #fdecec; }
.else { color: #b3261e; font-weight: 600; }
.warn { color: #8a5300; }
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg .bar.match, svg .bar.reference { fill: #3b6fb6; }
svg .bar.mismatch { fill: #c4463a; }
svg .bar.failed { fill: #b8bfcc; }
svg .floor { stroke: #1d2330; stroke-width: 1.5; stroke-dasharray: 5 4; }
svg .model-title { font-weight: 600; }
svg .verdict.mismatch { fill: #b3261e; font-weight: 600; }
svg .verdict.failed { fill: #7a8194; }
)";

constexpr int kLabelWidth = 190, kBarWidth = 520, kRowHeight = 26, kTitleHeight = 34, kWidth = 1180;

std::string chart(const BenchReport& rep) {
  int height = 10;
  for (const auto& m : rep.models) height += kTitleHeight + kRowHeight * static_cast<int>(m.rows.size()) + 12;
  std::string s = fmt::format(
      "<svg id=\"p50-chart\" role=\"img\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "aria-label=\"p50 latency per rung per model\">\n",
      kWidth, height);
  int y = 10;
  for (const auto& m : rep.models) {
    double top = 0, floor_p50 = 0;
    for (const auto& r : m.rows) {
      if (r.ok) top = std::max(top, r.latency.p50);
      if (r.ok && r.match == OutputMatch::kReference && floor_p50 == 0) floor_p50 = r.latency.p50;  // the first form's floor
    }
    if (top <= 0) top = 1;
    std::string title = m.model_id;
    if (m.forms.size() > 1) {
      std::vector<std::string> labels;
      for (const auto& f : m.forms) labels.push_back(f.label);
      title = m.name + " (forms " + fmt::format("{}", fmt::join(labels, ", ")) + ")";
    }
    s += fmt::format("<g class=\"model\" data-model=\"{}\">\n<text class=\"model-title\" x=\"0\" y=\"{}\">{} · p50 latency, ms, one scale</text>\n",
                     html_escape(m.name), y + 18, html_escape(title));
    y += kTitleHeight;
    const int rows_top = y;
    for (const auto& r : m.rows) {
      const char* cls = !r.ok ? "failed" : r.match == OutputMatch::kMismatch ? "mismatch" : r.match == OutputMatch::kReference ? "reference" : "match";
      const double w = r.ok ? std::max(2.0, kBarWidth * r.latency.p50 / top) : 6.0;
      s += fmt::format("<text x=\"0\" y=\"{}\">{}</text>\n", y + 17, html_escape(row_label(m, r)));
      s += fmt::format("<rect class=\"bar {}\" data-model=\"{}\" data-form=\"{}\" data-rung=\"{}\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"><title>{}</title></rect>\n",
                       cls, html_escape(m.name), html_escape(r.model_form), html_escape(r.rung), kLabelWidth, y + 4, w, kRowHeight - 8,
                       html_escape(r.ok ? fmt::format("{} p50 {} ms", r.display, ms(r.latency.p50)) : r.failure_reason));
      // The chart's label is short (the table has every interval): p50, × floor with its interval, × f32, placement, verdict.
      std::string label = r.ok ? fmt::format("{} ms · {} floor{} · {} placed · {}", ms(r.latency.p50), ratio_text(r.x_floor),
                                             r.x_f32 && m.forms.size() > 1 ? " · " + ratio_cell(r.x_f32->ratio) + " f32" : "",
                                             r.placement ? fmt::format("{:.0f}%", r.placement->time_share * 100) : "–", verdict_text(r))
                               : verdict_text(r);
      if (r.ok && r.computes_something_else()) label = "≠ " + label;
      s += fmt::format("<text class=\"verdict {}\" x=\"{:.1f}\" y=\"{}\">{}</text>\n", cls, kLabelWidth + w + 8, y + 17, html_escape(label));
      y += kRowHeight;
    }
    if (floor_p50 > 0) {
      const double x = kLabelWidth + kBarWidth * floor_p50 / top;
      s += fmt::format("<line class=\"floor\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"><title>CPU floor</title></line>\n", x,
                       rows_top, y);
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">CPU floor{}</text>\n", x, rows_top - 2,
                       m.forms.size() > 1 ? " (" + html_escape(m.forms.front().label) + ")" : "");
    }
    s += "</g>\n";
    y += 12;
  }
  s += "</svg>\n";
  return s;
}

std::string table(const BenchModelReport& m) {
  std::string s =
      "<table class=\"bench\">\n<thead><tr><th>rung</th><th>form</th><th>model id</th><th>build cold</th><th>build cached</th><th>first</th>"
      "<th>min</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>mean</th><th>cv</th><th>inf/s</th><th>peak MiB</th>"
      "<th title=\"this row's time over the CPU floor's, the same form: paired runs, 99% interval\">× floor</th>"
      "<th title=\"this form's time over the f32 form's on the same rung: paired runs, 99% interval\">× f32</th>"
      "<th title=\"nodes the rung's provider ran, and their share of kernel time\">placed</th><th>output vs CPU</th></tr></thead>\n<tbody>\n";
  for (const auto& r : m.rows) {
    const char* cls = !r.ok ? "row failed" : r.computes_something_else() ? "row mismatch" : "row";
    if (!r.ok) {
      s += fmt::format("<tr class=\"{}\" data-rung=\"{}\" data-form=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td colspan=\"15\" class=\"text\">failed ({}): {}</td>"
                       "<td>not compared</td></tr>\n",
                       cls, html_escape(r.rung), html_escape(r.model_form), html_escape(r.display), html_escape(r.model_form), html_escape(r.model_id), html_escape(r.failure_class), html_escape(r.failure_reason));
      continue;
    }
    const auto& l = r.latency;
    std::string notes;
    for (const auto& e : r.evidence) notes += (notes.empty() ? "" : "<br>") + html_escape(e);
    if (r.high_variation()) notes = fmt::format("<span class=\"warn\">cv above {:.0f}%: noisy</span>", kHighVariation * 100) + (notes.empty() ? "" : "<br>") + notes;
    s += fmt::format(
        "<tr class=\"{}\" data-rung=\"{}\" data-form=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td><td>{:.0f}</td><td class=\"x-floor\">{}</td><td class=\"x-f32\">{}</td>"
        "<td class=\"placed\">{}</td><td class=\"text\">{}</td></tr>\n"
        "<tr class=\"notes\"><td></td><td colspan=\"19\" class=\"text\">{}</td></tr>\n",
        cls, html_escape(r.rung), html_escape(r.model_form), html_escape(r.display), html_escape(r.model_form), html_escape(r.model_id), ms(r.build_cold_ms), ms(r.build_cached_ms), ms(r.first_run_ms),
        marked(r, ms(l.min)), marked(r, ms(l.p50)), marked(r, ms(l.p90)), marked(r, ms(l.p99)), marked(r, ms(l.max)),
        marked(r, ms(l.mean)), l.cv * 100, marked(r, fmt::format("{:.1f}", r.throughput_per_s)), r.peak_rss_mb,
        r.x_floor ? marked(r, ratio_text(r.x_floor)) : "–", r.x_f32 ? marked(r, ratio_text(r.x_f32)) : "–", placed_text(r),
        html_escape(verdict_text(r)), notes);
  }
  s += "</tbody>\n</table>\n";
  return s;
}

}  // namespace

std::string bench_html(const BenchReport& rep, const std::string& command) {
  std::string title = "rung bench";
  for (std::size_t i = 0; i < rep.models.size(); ++i) title += (i ? ", " : " · ") + rep.models[i].name;
  std::string s = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(title) +
                  "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  s += "<h1>" + html_escape(title) + "</h1>\n";
  s += fmt::format("<p class=\"env\">{} · {} · {} ({} logical CPUs) · ONNX Runtime {} (API {}) · threads {} · measured {}</p>\n",
                   html_escape(rep.hostname), html_escape(rep.os), html_escape(rep.cpu), rep.logical_cpus, html_escape(rep.runtime_version), rep.api_version,
                   rep.settings.threads == 0 ? std::string("ONNX Runtime's default") : std::to_string(rep.settings.threads),
                   html_escape(rep.date));
  s += fmt::format("<p class=\"env\">{} warm-up runs, {}, {} round{} (rung order rotated each round; ratios paired within a round); "
                   "inputs: {}; each rung in its own process. Times in ms. × floor: a row's time over the CPU floor's for the same form; "
                   "× f32: a form's time over the f32 form's on the same rung; both the median of paired run ratios with its 99% "
                   "interval (the probe's speed rule). Placed: nodes the rung's provider ran and their share of kernel time. ≠ marks a rung whose outputs differ from the CPU's: "
                   "its numbers are for something else.</p>\n",
                   rep.settings.warmup,
                   rep.settings.duration_s > 0 ? fmt::format("timed for {:g} s", rep.settings.duration_s)
                                               : fmt::format("{} timed runs", rep.settings.runs),
                   rep.settings.rounds, rep.settings.rounds == 1 ? "" : "s", html_escape(rep.inputs_mode));
  s += "<p class=\"env\">command: <code>" + html_escape(command) + "</code></p>\n";
  s += "<h2>p50 latency per rung</h2>\n" + chart(rep);
  for (const auto& m : rep.models) {
    s += fmt::format("<h2>{}</h2>\n", html_escape(m.forms.size() > 1 ? m.name : m.model_id));
    if (m.forms.empty()) {
      s += fmt::format("<p class=\"model-facts\">{} · {} · {} bytes · sha256 {} · opset {} · inputs: {}</p>\n", html_escape(m.path.filename().string()),
                       html_escape(m.form), m.size_bytes, html_escape(m.sha256), m.opset, html_escape(m.inputs_described));
    }
    for (const auto& f : m.forms) {
      s += fmt::format("<p class=\"model-facts\">{}{} · {} · {} bytes · sha256 {} · opset {} · inputs: {}</p>\n",
                       m.forms.size() > 1 ? "form " + html_escape(f.label) + ": " : "", html_escape(f.path.filename().string()), html_escape(f.form),
                       f.size_bytes, html_escape(f.sha256), f.opset, html_escape(f.inputs_described));
    }
    s += table(m);
  }
  if (!rep.warnings.empty()) {
    s += "<h2>Warnings</h2>\n<ul>\n";
    for (const auto& w : rep.warnings) s += "<li class=\"warn\">" + html_escape(w) + "</li>\n";
    s += "</ul>\n";
  }
  s += "</body>\n</html>\n";
  return s;
}

Status write_bench_html(const std::filesystem::path& file, const BenchReport& report, const std::string& command) {
  return write_file_atomically(file, bench_html(report, command));
}

}  // namespace rung
