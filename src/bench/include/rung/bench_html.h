// The bench report as one self-contained HTML page (no script, no network): a
// table per model and an inline SVG chart of p50 latency per rung per model,
// the CPU floor marked, the output-match verdict beside every bar.
#pragma once

#include <filesystem>
#include <string>

#include "rung/bench.h"
#include "rung/result.h"

namespace rung {

// Every row of every model is one <tr class="row"> and one <rect class="bar">.
std::string bench_html(const BenchReport& report, const std::string& command);
// Written atomically: a reader never sees half a page.
Status write_bench_html(const std::filesystem::path& file, const BenchReport& report, const std::string& command);

}  // namespace rung
