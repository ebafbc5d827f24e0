// The parity report, as text for people and as JSON for machines.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "os/atomic_file.h"
#include "os/json_input.h"
#include "rung/json_text.h"
#include "rung/parity.h"

namespace rung {

bool ParityReport::passed() const {
  return !gates.empty() && std::all_of(gates.begin(), gates.end(), [](const GateOutcome& g) { return g.passed; });
}

std::string ParityReport::text() const {
  auto placed = [](const ParitySideRun& r) { return r.placement.empty() ? std::string() : "\n      " + r.placement; };
  std::string out = fmt::format("ref   {}{}\ncand  {}{}\n{} input{}\n\n", ref, placed(ref_run), cand, placed(cand_run), inputs,
                                inputs == 1 ? "" : "s");
  std::size_t failed = 0;
  for (const auto& g : gates) {
    failed += !g.passed;
    // A decision gate says on how many inputs the reference decided anything.
    const std::string counted = g.decision ? fmt::format(" ({} inputs, {} vacuous)", g.judged, g.vacuous) : "";
    out += fmt::format("{}  {}{}: {}\n", g.passed ? "PASS" : "FAIL", g.title, counted, g.summary);
    for (const auto& d : g.details) out += fmt::format("      {}\n", d);
    for (const auto& d : g.shown) out += fmt::format("      {}\n", d);
  }
  if (gates.size() == 1) {
    out += failed ? "\nthe gate failed\n" : "\nthe gate passed\n";
  } else {
    out += failed ? fmt::format("\n{} of {} gates failed\n", failed, gates.size()) : fmt::format("\nall {} gates passed\n", gates.size());
  }
  return out;
}

namespace {

nlohmann::json side_run_json(const ParitySideRun& r) {
  return {{"model_file", r.model_file},
          {"model_sha256", r.model_sha256},
          {"model_stable_sha256", r.model_stable_sha256},
          {"rung", r.rung},
          {"runtime", {{"name", "onnxruntime"}, {"version", r.runtime_version}}},
          {"device", r.device},
          {"placement", r.placement}};
}

}  // namespace

std::string ParityReport::to_json() const {
  nlohmann::json gs = nlohmann::json::array();
  for (const auto& g : gates) {
    gs.push_back({{"decoder", g.decoder},
                  {"title", g.title},
                  {"passed", g.passed},
                  {"summary", g.summary},
                  {"details", g.details},
                  {"decision", g.decision},
                  {"judged", g.judged},
                  {"vacuous", g.vacuous},
                  {"stats", parse_json_or(g.stats_json, nlohmann::json::object())}});
  }
  return json_text(nlohmann::json{{"schema", "rung-parity-report"},
                        {"schema_version", 1},
                        {"ref", ref},
                        {"cand", cand},
                        {"sides", {{"ref", side_run_json(ref_run)}, {"cand", side_run_json(cand_run)}}},
                        {"inputs", inputs},
                        {"passed", passed()},
                        {"gates", gs}}, 2);
}

Status ParityReport::write_json(const std::filesystem::path& path) const { return write_file_atomically(path, to_json() + "\n"); }

}  // namespace rung
