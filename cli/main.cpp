#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "commands.h"
#include "rung/hardware.h"
#include "rung/runtime.h"
#include "rung/termination.h"

namespace {

// `rung --version`: rung's own version, the ONNX Runtime API it is compiled against,
// and each build it finds here (as `rung doctor` lists them), with the API each serves it.
std::string version_text() {
  std::string out = fmt::format("rung {}\n", RUNG_VERSION);
  out += fmt::format("ONNX Runtime API: compiled against {} (builds serving {} or newer are used)\n", rung::compiled_api_version(),
                     rung::kMinimumApiVersion);
  rung::RuntimeSearchOptions search;
  auto discovery = rung::discover_runtimes(search, rung::detect_hardware("/"));
  if (!discovery) return out + fmt::format("ONNX Runtime builds: none found: {}\n", discovery.error().message);
  out += "ONNX Runtime builds:\n";
  for (std::size_t i = 0; i < discovery->builds.size(); ++i) {
    const auto& b = discovery->builds[i];
    const bool chosen = discovery->chosen && *discovery->chosen == i;
    if (b.loaded) {
      // rung asks no higher than its own API: a build that serves it serves at least that much.
      const std::string api = b.api_version >= rung::compiled_api_version() ? fmt::format("API {} or newer", b.api_version) : fmt::format("API {}", b.api_version);
      out += fmt::format("  {} {} (serves {}) {} ({})\n", chosen ? "*" : " ", b.version, api, b.library.string(), rung::origin_name(b.origin));
    } else {
      out += fmt::format("  x {} ({}): skipped: {}\n", b.library.string(), rung::origin_name(b.origin), b.skipped_reason);
    }
  }
  out += fmt::format("  chosen: {}\n", discovery->choice_reason);
  return out;
}

}  // namespace

namespace rung::cli {
Result<ProbeOutcome> probe_decision(const ProbeOptions& options) { return run_probe(options); }
}  // namespace rung::cli

int main(int argc, char** argv) {
  rung::keep_onnxruntime_telemetry_off_in_this_process();
  rung::end_cleanly_on_termination_signals();
  CLI::App app{"rung: puts each ONNX model on the fastest execution provider that really works on this device"};
  app.set_version_flag(
      "--version",
      [] {
        std::string text = version_text();
        text.pop_back();  // CLI11 ends the line itself
        return text;
      }, "Print rung's version and the ONNX Runtime builds it finds, then exit");
  app.require_subcommand(1);
  rung::cli::add_doctor_command(app);
  rung::cli::add_probe_command(app);
  rung::cli::add_prepare_command(app);
  rung::cli::add_bench_command(app);
  rung::cli::add_parity_command(app);
  rung::cli::add_quantise_command(app, argc, argv);
  rung::cli::add_upgrade_command(app);
  rung::cli::add_conform_command(app);
  rung::cli::add_registry_command(app);
  rung::cli::add_variants_command(app);
  return rung::cli::run_command_line(app, argc, argv);
}
