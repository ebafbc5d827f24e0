// How often the probe's decision changes when nothing changed: the probe run N
// times (default 20) on each sample model and on constructed cases (a tie, an
// accelerator admitted by the acceptance ratio, a provider that takes no node, a
// memoising accelerator clearly faster than the CPU),
// reporting for each the rungs chosen, the verdicts and how many times the
// decision differed from the first probe's. The goal is never.
//
//   build/bench/probe-stability-bench [--probes N] [--in-process]
#include <fmt/format.h>


#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model_builder.h"
#include "os/this_process.h"
#include "test_support.h"
#include "rung/probe.h"

namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  rung::RegisteredModel model;
  double acceptance_ratio = 1.0;
  std::map<std::string, std::string> env;  // simulated accelerator knobs (RUNG_SIM_EP_*)
};

fs::path deps() { return RUNG_BENCH_DEPS_DIR; }

std::vector<Case> cases(const fs::path& work) {
  const fs::path models = deps() / "models";
  rung::InputSpec vad;
  vad.dims = {{"input:1", 512}, {"state:1", 1}};
  vad.values = {{"sr", {16000}}};
  // The tie: nearly all the time in a MatMul the simulated accelerator leaves to the CPU.
  rung::test::ModelBuilder tie;
  tie.input("x", {64, 192})
      .initializer("w", {192, 192}, std::vector<float>(192 * 192, 0.01f))
      .node("MatMul", {"x", "w"}, {"m"})
      .node("Relu", {"m"}, {"y"})
      .output("y", {64, 192});
  const fs::path tie_model = tie.save(work / "matmul_relu.onnx");
  const fs::path elementwise = rung::test::write_elementwise_model(work / "elementwise.onnx", {1, 16, 64});
  const fs::path chain_model = rung::test::write_matmul_chain_model(work / "matmul_chain.onnx");
  return {
      {"ppocr_cls (sample)", {"ppocr_cls", models / "ppocr" / "ch_ppocr_mobile_v2.0_cls_infer.onnx", {}}, 1.0, {}},
      {"silero_vad (sample)", {"silero_vad", models / "silero-vad" / "silero_vad.onnx", vad}, 1.0, {}},
      {"tie: MatMul+Relu", {"matmul_relu", tie_model, {}}, 1.0, {{"RUNG_SIM_EP_COMPUTE_DELAY_US", "1"}}},
      {"tie, ratio 3.0", {"matmul_relu", tie_model, {}}, 3.0, {}},
      {"no node placed", {"elementwise", elementwise, {}}, 1000, {{"RUNG_SIM_EP_OPS", "Sqrt"}}},
      {"clearly faster (memoise)", {"matmul_chain", chain_model, {}}, 1.0, {{"RUNG_SIM_EP_OPS", "MatMul"}, {"RUNG_SIM_EP_MEMOISE", "1"}}},
  };
}

struct Tally {
  std::map<std::string, int> chosen;
  std::map<std::string, int> verdicts;  // the simulated accelerator's
  int changes = 0;
  int failures = 0;
  std::string first;
};

}  // namespace

int main(int argc, char** argv) {
  int probes = 20;
  bool in_process = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--probes") == 0 && i + 1 < argc) probes = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--in-process") == 0) in_process = true;
  }
  const fs::path work = fs::temp_directory_path() / fmt::format("rung-stability-{}", rung::this_process_id());
  fs::create_directories(work / "plugins");
  fs::copy_file(RUNG_BENCH_SIM_EP, work / "plugins" / fs::path(RUNG_BENCH_SIM_EP).filename());
  fmt::print("{} probes per case, {}; the simulated accelerator from --plugin-dir\n\n", probes,
             in_process ? "in process" : "each rung in a worker process");
  fmt::print("{:<24} {:>7}  {:<40} {}\n", "case", "changed", "chosen", "simulated accelerator's verdicts");
  int total_changes = 0;
  for (const Case& c : cases(work)) {
    // The knobs reach the plugin in this process (--in-process) and, inherited, the workers; test_support.h sets them.
    std::vector<std::unique_ptr<rung::test::ScopedEnv>> knobs;
    for (const auto& [k, v] : c.env) knobs.push_back(std::make_unique<rung::test::ScopedEnv>(k.c_str(), v.c_str()));
    Tally t;
    for (int i = 0; i < probes; ++i) {
      rung::ProbeOptions o;
      o.cache_dir = work / "cache";
      o.models = {c.model};
      o.runtimes.explicit_dir = deps() / "runtimes" / "onnxruntime-1.30.0";
      o.runtimes.include_default_locations = false;
      o.runtimes.read_environment = false;
      o.plugin_dirs = {work / "plugins"};
      o.worker = RUNG_BENCH_WORKER;
      o.isolate = !in_process;
      o.reprobe = true;
      o.acceptance_ratio = c.acceptance_ratio;
      auto out = rung::run_probe(o);
      if (!out) {
        ++t.failures;
        continue;
      }
      ++t.chosen[out->chosen];
      for (const auto& r : out->rungs) {
        if (r.rung == "rung_sim_ep") ++t.verdicts[rung::verdict_name(r.verdict)];
      }
      if (t.first.empty()) t.first = out->chosen;
      t.changes += out->chosen != t.first;
    }
    knobs.clear();
    auto join = [](const std::map<std::string, int>& m) {
      std::string s;
      for (const auto& [k, n] : m) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", k, n);
      return s;
    };
    fmt::print("{:<24} {:>7}  {:<40} {}{}\n", c.name, t.changes, join(t.chosen), join(t.verdicts),
               t.failures ? fmt::format(" ({} probes failed)", t.failures) : "");
    total_changes += t.changes;
  }
  fs::remove_all(work);
  fmt::print("\ndecision changed {} times in all\n", total_changes);
  return total_changes == 0 ? 0 : 1;
}
