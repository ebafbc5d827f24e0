// `rung doctor`: the runtime builds found, the hardware, and this platform's ladder.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "output_check.h"
#include "runtime_args.h"
#include "rung/hardware.h"
#include "rung/print.h"
#include "rung/printable.h"
#include "rung/ladder.h"
#include "rung/runtime.h"
#include "rung/software_gpu.h"
#include "rung/standing.h"

namespace rung::cli {
namespace {

struct DoctorOptions {
  std::string hardware_root = "/";
  RuntimeArgs runtime;
  PluginArgs plugins;
  JsonOutput json;
  SoftwareGpuArgs software_gpu;
};

// Whether the software GPU adapter is there, and whether this run lends it to its workers.
struct AdapterFacts {
  std::optional<SoftwareGpu> found;
  std::string missing;  // why none was found
  bool lent = false;
  std::string line() const {
    if (!found) return "none (" + missing + ")";
    return found->describe() + (lent ? "; lent to the workers (WebGPU on lavapipe (software))" : "; not lent (--software-gpu or RUNG_SOFTWARE_GPU=1 lends it)");
  }
};

AdapterFacts adapter_facts() {
  AdapterFacts f;
  if (auto lent = lent_software_gpu()) {
    f.found = *lent;
    f.lent = true;
  } else if (auto gpu = find_software_gpu()) {
    f.found = *gpu;
  } else {
    f.missing = gpu.error().message;
  }
  return f;
}

nlohmann::json hardware_json(const Hardware& hw) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : hw.gpus) {
    gpus.push_back({{"address", g.address},
                    {"vendor", vendor_name(g.vendor)},
                    {"id", fmt::format("{:04x}:{:04x}", g.vendor_id, g.device_id)},
                    {"class", fmt::format("0x{:06x}", g.class_code)}});
  }
  nlohmann::json j = {{"os", os_name(hw.os)},
                      {"identity", hw.identity()},
                      {"gpus", gpus},
                      {"nvidia_driver", hw.nvidia_driver ? nlohmann::json(*hw.nvidia_driver) : nlohmann::json(nullptr)},
                      {"nvidia_device_nodes", hw.nvidia_device_nodes},
                      {"rocm_kfd", hw.rocm_kfd},
                      {"dri_render_nodes", hw.dri_render_nodes},
                      {"pci_visible", hw.pci_visible},
                      {"hexagon_dsp", hw.hexagon_dsp},
                      {"cpu",
                       {{"model", hw.cpu.model},
                        {"physical_cores", hw.cpu.physical_cores},
                        {"logical_cpus", hw.cpu.logical_cpus},
                        {"fast_cores", hw.cpu.fast_cores},
                        {"core_classes", hw.cpu.core_classes},
                        {"inference_threads", default_inference_threads(hw.cpu)},
                        {"flags", hw.cpu.flags.size()}}}};
  j["soc_gpus"] = nlohmann::json::array();
  for (const auto& g : hw.soc_gpus) j["soc_gpus"].push_back({{"node", g.node}, {"driver", g.driver}, {"vendor", vendor_name(g.vendor)}});
  j["board"] = hw.board;
  j["adapters"] = nlohmann::json::array();
  for (const auto& a : hw.adapters) {
    j["adapters"].push_back({{"name", a.name}, {"vendor_id", fmt::format("{:04x}", a.vendor_id)}, {"device_id", fmt::format("{:04x}", a.device_id)},
                             {"vendor", vendor_name(a.vendor)}, {"dedicated_memory_mb", a.dedicated_memory_mb}, {"software", a.software}});
  }
  j["unreadable"] = hw.unreadable;
  // What decides how fast a quantised form runs here (rung quantise records the same).
  j["cpu"]["quantised_speed_features"] = nlohmann::json::object();
  for (const auto& f : quantised_speed_features(hw.cpu)) j["cpu"]["quantised_speed_features"][f.id] = f.present;
  if (hw.soc) {
    j["soc"] = {{"vendor", hw.soc->vendor}, {"family", hw.soc->family}, {"machine", hw.soc->machine}, {"soc_id", hw.soc->soc_id}};
  } else {
    j["soc"] = nullptr;
  }
  return j;
}

nlohmann::json build_json(const RuntimeBuild& b, bool chosen) {
  nlohmann::json j = {{"library", b.library.string()}, {"origin", origin_name(b.origin)}, {"loaded", b.loaded}, {"chosen", chosen}};
  if (b.loaded) {
    j["version"] = b.version;
    j["api_version"] = b.api_version;
    j["providers"] = b.providers;
    j["score"] = b.score;
    j["score_reason"] = b.score_reason;
  } else {
    j["skipped_reason"] = b.skipped_reason;
  }
  return j;
}

nlohmann::json standing_json(const RungStanding& s) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : s.files) files.push_back({{"name", f.name}, {"present", f.present}});
  nlohmann::json needs = nlohmann::json::array();
  for (const auto& n : s.needs) {
    needs.push_back({{"name", n.name}, {"what", n.what}, {"needed_by", n.needed_by},
                     {"path", n.path.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.path)}});
  }
  return {{"rung", s.rung.name},
          {"display", s.rung.display},
          {"provider", s.rung.provider},
          {"form", form_name(s.rung.form)},
          {"append", append_method_name(s.rung.append)},
          {"compiles_engines", s.rung.compiles_engines},
          {"provider_in_build", s.provider_in_build},
          {"files", files},
          {"needs", needs},
          {"provider_onnxruntime_version", s.provider_version.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.provider_version)},
          {"problems", s.problems},
          {"ready", s.ready},
          {"note", s.note}};
}

void print_text(const RuntimeDiscovery& d, const Hardware& hw, const Ladder& ladder,
                const std::vector<RungStanding>& standing, const std::string& about, const AdapterFacts& adapter) {
  rung::print("{}\n\n", about);
  rung::print("Runtime builds\n");
  for (std::size_t i = 0; i < d.builds.size(); ++i) {
    const auto& b = d.builds[i];
    bool chosen = d.chosen && *d.chosen == i;
    if (b.loaded) {
      rung::print("  {} {} ({})\n", chosen ? "*" : " ", b.library.string(), origin_name(b.origin));
      rung::print("      ONNX Runtime {}, API {}, providers: {}\n", b.version, b.api_version, fmt::join(b.providers, ", "));
      rung::print("      score {}: {}\n", b.score, b.score_reason);
    } else {
      rung::print("  x {} ({})\n      skipped: {}\n", b.library.string(), origin_name(b.origin), b.skipped_reason);
    }
  }
  rung::print("  chosen: {}\n", d.choice_reason);
  rung::print("  searched:");
  for (const auto& s : d.searched) rung::print(" {}{}", s.path.string(), s.exists ? "" : " (missing)");
  rung::print("\n\nHardware\n");
  rung::print("  os: {}\n", os_name(hw.os));
  rung::print("  cpu: {} ({} cores, {} threads)\n", hw.cpu.model.empty() ? "unknown" : hw.cpu.model, hw.cpu.physical_cores, hw.cpu.logical_cpus);
  rung::print("  inference pool: {}\n", inference_threads_reason(hw.cpu));
  rung::print("  quantised speed: {}\n", quantised_speed_line(quantised_speed_features(hw.cpu)));
  if (!hw.board.empty()) rung::print("  board: {}\n", hw.board);
  if (hw.gpus.empty() && hw.soc_gpus.empty()) rung::print("  gpu: none seen{}\n", hw.pci_visible ? "" : " (PCI not visible)");
  for (const auto& g : hw.soc_gpus)
    rung::print("  gpu: {} on the SoC at {} ({})\n",
               g.vendor == Vendor::kArm ? "Arm Mali" : g.vendor == Vendor::kQualcomm ? "Qualcomm Adreno" : "a GPU", g.node,
               g.driver.empty() ? "no driver named" : "driver " + g.driver);
  for (const auto& g : hw.gpus) rung::print("  gpu: {} {:04x}:{:04x} at {}\n", vendor_name(g.vendor), g.vendor_id, g.device_id, g.address);
  for (const auto& a : hw.adapters) {
    rung::print("  adapter: {} ({:04x}:{:04x}, {})\n", printable(a.name), a.vendor_id, a.device_id,
               a.software ? "software, no GPU" : fmt::format("{} MB dedicated", a.dedicated_memory_mb));
  }
  for (const auto& u : hw.unreadable) rung::print("  unreadable: {}\n", printable(u));
  if (hw.nvidia_driver) rung::print("  nvidia driver: {}\n", *hw.nvidia_driver);
  if (!hw.nvidia_device_nodes.empty()) rung::print("  nvidia nodes: {}\n", fmt::join(hw.nvidia_device_nodes, " "));
  if (hw.rocm_kfd) rung::print("  rocm: /dev/kfd\n");
  if (!hw.dri_render_nodes.empty()) rung::print("  render nodes: {}\n", fmt::join(hw.dri_render_nodes, " "));
  if (hw.soc) rung::print("  soc: {} {} {} ({})\n", hw.soc->vendor, hw.soc->family, hw.soc->machine, hw.soc->soc_id);
  if (hw.hexagon_dsp) rung::print("  hexagon: compute DSP present\n");
  rung::print("  identity: {}\n", hw.identity());
  rung::print("  software gpu: {}\n", adapter.line());
  rung::print("\nLadder ({})\n", fmt::join(ladder.platforms, ", "));
  for (const auto& s : standing) {
    rung::print("  {:<10} {:<28} {:<24} {}\n", s.rung.display, s.rung.provider, form_name(s.rung.form), s.note);
  }
}

int run_doctor(const DoctorOptions& opt) {
  {
    std::vector<NamedPath> inputs = {{"--ort-dir", path_from_utf8(opt.runtime.ort_dir)}};
    for (const auto& d : opt.plugins.dirs) inputs.push_back({"--plugin-dir", path_from_utf8(d)});
    check_outputs_before_work({opt.json.output()}, inputs);
  }
  opt.software_gpu.apply();
  const AdapterFacts adapter = adapter_facts();
  Hardware hw = detect_hardware(path_from_utf8(opt.hardware_root));
  RuntimeSearchOptions search;
  opt.runtime.apply_to(search);
  search.explicit_dir_must_serve = false;  // the doctor lists every build, a refused --ort-dir with its reason
  auto discovery = discover_runtimes(search, hw);
  if (!discovery) throw CliError(discovery.error());
  Ladder ladder = ladder_for(hw);
  const RuntimeBuild& chosen = *discovery->chosen_build();
  opt.plugins.apply_to(search);
  auto standing_or = ladder_standing(ladder, chosen, opt.plugins.paths(), search.allow_writable_plugins);
  if (!standing_or) throw CliError(standing_or.error());
  const auto& standing = *standing_or;
  // Until a probe has run, the floor is what this device is known to have.
  std::string about = about_line("CPU", *discovery);

  if (!opt.json.on_stdout()) print_text(*discovery, hw, ladder, standing, about, adapter);
  if (opt.json.on_stdout() || opt.json.to_file()) {
    nlohmann::json builds = nlohmann::json::array();
    for (std::size_t i = 0; i < discovery->builds.size(); ++i) {
      builds.push_back(build_json(discovery->builds[i], discovery->chosen && *discovery->chosen == i));
    }
    nlohmann::json searched = nlohmann::json::array();
    for (const auto& s : discovery->searched) searched.push_back({{"path", s.path.string()}, {"origin", origin_name(s.origin)}, {"exists", s.exists}});
    nlohmann::json rungs = nlohmann::json::array();
    for (const auto& s : standing) rungs.push_back(standing_json(s));
    nlohmann::json out = {{"schema", "rung-doctor"},
                          {"schema_version", 1},
                          {"about", about},
                          {"builds", builds},
                          {"chosen", {{"library", chosen.library.string()}, {"version", chosen.version}, {"reason", discovery->choice_reason}}},
                          {"searched", searched},
                          {"hardware", hardware_json(hw)},
                          {"software_gpu", adapter.found ? nlohmann::json{{"dir", adapter.found->dir.string()},
                                                                          {"driver", adapter.found->driver.string()},
                                                                          {"mesa", adapter.found->mesa_version},
                                                                          {"lent", adapter.lent}}
                                                         : nlohmann::json(nullptr)},
                          {"platforms", ladder.platforms},
                          {"ladder", rungs}};
    opt.json.emit(out);
  }
  return kExitOk;
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto opt = std::make_shared<DoctorOptions>();
  auto* cmd = app.add_subcommand("doctor", "Show the runtime builds found, the hardware, and this device's ladder");
  opt->json.add_to(*cmd, "the builds, the hardware and the ladder");
  opt->runtime.add_to(*cmd);
  opt->plugins.add_to(*cmd);
  add_text(*cmd, "--hardware-root", opt->hardware_root, "Read the hardware description under this directory (for testing)")
      ->group("");
  opt->software_gpu.add_to(*cmd);
  cmd->callback([opt] {
    int code = run_doctor(*opt);
    if (code != kExitOk) throw CliError(code, "doctor failed");
  });
}

}  // namespace rung::cli
