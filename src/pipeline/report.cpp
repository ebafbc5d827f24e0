// Where the time went: the pipeline's report as a table and as JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "rung/pipeline.h"
#include "rung/json_text.h"
#include "rung/rung_names.h"

namespace rung {

std::string PipelineReport::table() const {
  std::string out = fmt::format("  {:<10} {:>7} {:>6} {:>9} {:>9} {:>10} {:>10} {:>7}\n", "stage", "threads", "pages", "busy s", "cpu s",
                                "waiting s", "blocked s", "busy");
  for (const auto& s : stages) {
    out += fmt::format("  {:<10} {:>7} {:>6} {:>9.2f} {:>9.2f} {:>10.2f} {:>10.2f} {:>6.1f}%\n", s.name, s.threads, s.items, s.busy_s,
                       s.cpu_s, s.waiting_s, s.blocked_s, 100 * s.utilisation);
  }
  std::vector<std::string> ids;
  for (const auto& [name, id] : model_ids) ids.push_back(fmt::format("{}={} on {}", name, id, model_rungs.count(name) ? rung_display_name(model_rungs.at(name)) : "?"));
  out += fmt::format("{} pages ({} failed) in {:.2f} s, {:.2f} pages/s, {}{} · bottleneck {} busy {:.1f}% of the wall-clock · {}\n",
                     pages, failed, wall_s, pages_per_second, sequential ? "sequential" : "pipelined", cancelled ? ", cancelled" : "",
                     bottleneck.empty() ? "-" : bottleneck, 100 * bottleneck_utilisation, fmt::join(ids, ", "));
  return out;
}

std::string PipelineReport::json() const {
  nlohmann::json st = nlohmann::json::array();
  for (const auto& s : stages) {
    st.push_back({{"stage", s.name}, {"threads", s.threads}, {"pages", s.items}, {"busy_s", s.busy_s}, {"cpu_s", s.cpu_s},
                  {"waiting_s", s.waiting_s}, {"blocked_s", s.blocked_s}, {"utilisation", s.utilisation}});
  }
  return json_text(nlohmann::json{{"rung", rung},
                        {"model_ids", model_ids},
                        {"model_rungs", model_rungs},
                        {"mode", sequential ? "sequential" : "pipelined"},
                        {"cancelled", cancelled},
                        {"pages", pages},
                        {"failed", failed},
                        {"wall_s", wall_s},
                        {"pages_per_second", pages_per_second},
                        {"bottleneck", bottleneck},
                        {"bottleneck_utilisation", bottleneck_utilisation},
                        {"stages", st}});
}

}  // namespace rung
