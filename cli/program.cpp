// What every full rung program does first (rung-full on Linux, rung.exe on
// Windows): ONNX Runtime's telemetry off in this process, the cleanup on
// termination signals, and the App whose --version lists the builds found.
#include <fmt/format.h>

#include "commands.h"
#include "knob_flags.h"
#include "rung/hardware.h"
#include "rung/runtime.h"
#include "rung/setting_names.h"
#include "rung/termination.h"

namespace rung::cli {
namespace {

// `rung --version`: rung's own version, the ONNX Runtime API it is compiled against,
// and each build it finds here (as `rung doctor` lists them), with the API each serves it.
std::string version_text() {
  std::string out = fmt::format("rung {}\n", RUNG_VERSION);
  out += fmt::format("ONNX Runtime API: compiled against {} (builds serving {} or newer are used)\n", compiled_api_version(),
                     kMinimumApiVersion);
  RuntimeSearchOptions search;
  auto discovery = discover_runtimes(search, detect_hardware("/"));
  if (!discovery) return out + fmt::format("ONNX Runtime builds: none found: {}\n", discovery.error().message);
  out += "ONNX Runtime builds:\n";
  for (std::size_t i = 0; i < discovery->builds.size(); ++i) {
    const auto& b = discovery->builds[i];
    const bool chosen = discovery->chosen && *discovery->chosen == i;
    if (b.loaded) {
      // rung asks no higher than its own API: a build that serves it serves at least that much.
      const std::string api = b.api_version >= compiled_api_version() ? fmt::format("API {} or newer", b.api_version) : fmt::format("API {}", b.api_version);
      out += fmt::format("  {} {} (serves {}) {} ({})\n", chosen ? "*" : " ", b.version, api, b.library.string(), origin_name(b.origin));
    } else {
      out += fmt::format("  x {} ({}): skipped: {}\n", b.library.string(), origin_name(b.origin), b.skipped_reason);
    }
  }
  out += fmt::format("  chosen: {}\n", discovery->choice_reason);
  return out;
}

}  // namespace

namespace {

// The command line's flags, named in the messages the engine's code makes under it:
// a setting that is a C ABI option is named by that option's flag (knob_flags.h).
std::string flag_of(Setting setting, std::string_view model) {
  if (const KnobFlag* knob = knob_flag(setting_option_key(setting)); knob != nullptr && !knob->flag.empty()) {
    return setting == Setting::kInputSpec ? fmt::format("{} {}=FILE", knob->flag, model) : std::string(knob->flag);
  }
  switch (setting) {  // the command line's own settings, which the C ABI does not offer
    case Setting::kAllowWritableRuntime: return "--allow-writable-runtime";
    case Setting::kAllowWritablePlugin: return "--allow-writable-plugin";
    case Setting::kMaxTensorMb: return "--max-tensor-mb";
    case Setting::kShape: return "--shape";
    case Setting::kInputSpec:
    case Setting::kProbeDeadline: break;
  }
  return {};
}

}  // namespace

void name_settings_by_flags() { use_setting_names(&flag_of); }

std::unique_ptr<CLI::App> start_rung_program() {
  name_settings_by_flags();
  keep_onnxruntime_telemetry_off_in_this_process();
  end_cleanly_on_termination_signals();
  auto app = std::make_unique<CLI::App>("rung: puts each ONNX model on the fastest execution provider that really works on this device");
  app->set_version_flag(
      "--version",
      [] {
        std::string text = version_text();
        text.pop_back();  // CLI11 ends the line itself
        return text;
      },
      "Print rung's version and the ONNX Runtime builds it finds, then exit");
  app->require_subcommand(1);
  return app;
}

}  // namespace rung::cli
