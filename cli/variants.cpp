// `rung variants resolve|lint`: each model group's DEFAULT variant on this device
// (or a hardware fixture tree), and the lint an application's CI runs on its
// manifest and deployment.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "json_output.h"
#include "numeric_args.h"
#include "output_check.h"
#include "reason_notes.h"
#include "runtime_args.h"
#include "rung/engine_core.h"
#include "rung/hardware.h"
#include "rung/print.h"
#include "rung/variants.h"
#include "rung/manifest_lint.h"
#include "variants_args.h"

namespace rung::cli {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

struct ResolveOptions {
  VariantArgs variants;
  RuntimeArgs runtime;
  PluginArgs plugins;
  std::string hardware_root = "/";
  JsonOutput json;
};

void run_resolve(const ResolveOptions& o) {
  check_outputs_before_work({o.json.output()}, {{"--variants", o.variants.manifest}, {"--deployment", o.variants.deployment}, {"--ort-dir", o.runtime.ort_dir}});
  auto [manifest, deployment] = o.variants.load();
  const Hardware hardware = detect_hardware(o.hardware_root);
  RuntimeSearchOptions search;
  o.runtime.apply_to(search);
  auto discovery = discover_runtimes(search, hardware);
  if (!discovery) throw CliError(discovery.error());
  const RuntimeBuild& build = *discovery->chosen_build();
  const core::StartFacts facts = core::start_facts(hardware, build, o.plugins.paths());
  const auto offered = variants::offered_rungs(facts, &deployment);

  json groups = json::array();
  std::vector<std::string> rows;
  ReasonNotes notes;  // a long reason once, under the table
  bool failed = false;
  for (const auto& g : manifest.groups) {
    auto r = variants::resolve(g, facts, &deployment);
    if (!r) {
      failed = true;
      groups.push_back({{"group", g.name}, {"error", r.error().message}});
      rows.push_back(fmt::format("  {:<24} {:<18} {:<12} {:<28} {}", g.name, "-", "-", "-", notes.cell(r.error().message)));
      continue;
    }
    const std::string id = model_id(g.name, r->variant->form);
    groups.push_back({{"group", g.name},
                      {"role", role_name(g.role)},
                      {"variant", r->variant->key},
                      {"rung", r->rung},
                      {"model_id", id},
                      {"file", r->variant->file.string()},
                      {"pinned_for", r->pinned_for.empty() ? json(nullptr) : json(r->pinned_for)},
                      {"by_order", r->by_order},
                      {"passed_over", r->passed_over},
                      {"reason", r->reason}});
    rows.push_back(fmt::format("  {:<24} {:<18} {:<12} {:<28} {}", g.name, r->variant->key, r->rung, id, notes.cell(r->reason)));
  }
  if (o.json.on_stdout() || o.json.to_file()) {
    o.json.emit(json{{"schema", "rung-variants-resolve"},
                     {"schema_version", 1},
                     {"manifest", manifest.path.string()},
                            {"deployment", {{"file", deployment.path.string()}, {"provisions", deployment.provisions}}},
                            {"hardware", hardware.identity()},
                            {"platforms", facts.platforms},
                            {"runtime", {{"version", build.version}, {"library", build.library.string()}}},
                            {"rungs", facts.rungs},
                            {"offered", offered},
                            {"groups", groups}});
  }
  if (!o.json.on_stdout()) {
    rung::print("{} · ONNX Runtime {} · platforms {} · rungs {} · offered by the deployment {}\n\n", hardware.identity(), build.version,
               fmt::join(facts.platforms, ", "), fmt::join(facts.rungs, ", "), fmt::join(offered, ", "));
    rung::print("  {:<24} {:<18} {:<12} {:<28} {}\n", "group", "variant", "rung", "model id", "why");
    for (const auto& r : rows) rung::print("{}\n", r);
    rung::print("{}", notes.text());
  }
  if (failed) throw CliError(kExitFailed, "some groups resolve to no variant here (see above)");
}

struct LintCliOptions {
  VariantArgs variants;
  std::string registry;
  std::string scan;
  JsonOutput json;
};

void run_lint(const LintCliOptions& o) {
  check_outputs_before_work({o.json.output()}, {{"--variants", o.variants.manifest}, {"--deployment", o.variants.deployment}});
  auto [manifest, deployment] = o.variants.load();
  variants::LintOptions options;
  options.registry_url = o.registry;
  auto findings = variants::lint(manifest, deployment, options);
  if (!findings) throw CliError(findings.error());
  if (!o.scan.empty()) {
    auto unnamed = variants::scan(manifest, o.scan);
    if (!unnamed) throw CliError(unnamed.error());
    findings->insert(findings->end(), unnamed->begin(), unnamed->end());
  }
  if (o.json.on_stdout() || o.json.to_file()) {
    json list = json::array();
    for (const auto& f : *findings) list.push_back({{"kind", variants::finding_kind_name(f.kind)}, {"subject", f.subject}, {"message", f.message}});
    o.json.emit(json{{"schema", "rung-variants-lint"}, {"schema_version", 1}, {"manifest", manifest.path.string()},
                     {"deployment", deployment.path.string()}, {"findings", list}});
  }
  if (!o.json.on_stdout()) {
    std::size_t variant_count = 0;
    for (const auto& g : manifest.groups) variant_count += g.variants.size();
    rung::print("{} · {} group{}, {} variant{} · deployment {} provisions {}\n", manifest.path.string(), manifest.groups.size(),
               manifest.groups.size() == 1 ? "" : "s", variant_count, variant_count == 1 ? "" : "s", deployment.path.string(),
               deployment.provisions.empty() ? std::string("the CPU only") : fmt::format("{}", fmt::join(deployment.provisions, ", ")));
    for (const auto& f : *findings) rung::print("  {:<13} {}: {}\n", variants::finding_kind_name(f.kind), f.subject, f.message);
    rung::print("{}\n", findings->empty() ? "clean" : fmt::format("{} finding{}", findings->size(), findings->size() == 1 ? "" : "s"));
  }
  if (!findings->empty()) throw CliError(kExitFailed, fmt::format("the manifest has {} finding{}", findings->size(), findings->size() == 1 ? "" : "s"));
}

}  // namespace

void add_variants_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("variants", "Model variants: each group's DEFAULT on this device, and the manifest's lint");
  cmd->require_subcommand(1);

  auto r = std::make_shared<ResolveOptions>();
  auto* resolve = cmd->add_subcommand("resolve", "Print each group's DEFAULT variant on this device (or a hardware fixture tree) and why");
  r->variants.add_to(*resolve);
  r->runtime.add_to(*resolve);
  r->plugins.add_to(*resolve);
  add_text(*resolve, "--hardware-root", r->hardware_root, "Read the hardware description under this directory (a fixture tree)");
  r->json.add_to(*resolve, "the resolution");
  resolve->callback([r] { run_resolve(*r); });

  auto l = std::make_shared<LintCliOptions>();
  auto* lint = cmd->add_subcommand("lint", "Check the manifest against its files, its deployment, its pins and the registry's evidence (exit 1 on a finding)");
  l->variants.add_to(*lint);
  add_text(*lint, "--registry", l->registry, "The release registry holding the evidence (default: RUNG_REGISTRY, else the user's)");
  add_text(*lint, "--scan", l->scan, "Also list model files in this directory that no variant names");
  l->json.add_to(*lint, "the findings");
  lint->callback([l] { run_lint(*l); });
}

}  // namespace rung::cli
