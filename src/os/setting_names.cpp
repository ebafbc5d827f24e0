#include "rung/setting_names.h"

#include <atomic>

namespace rung {
namespace {

// An embedded engine's: the C ABI's keys where it has one, else nothing to advise.
std::string engine_names(Setting setting, std::string_view model) {
  switch (setting) {
    case Setting::kShape: return "shape";
    case Setting::kInputSpec: return "the option model." + std::string(model) + ".input_spec";
    case Setting::kProbeDeadline: return "the option probe_deadline_ms";
    case Setting::kAllowWritableRuntime:
    case Setting::kAllowWritablePlugin:
    case Setting::kMaxTensorMb: return {};
  }
  return {};
}

std::atomic<SettingNames> installed{&engine_names};

}  // namespace

std::string setting_name(Setting setting, std::string_view model) { return installed.load()(setting, model); }

void use_setting_names(SettingNames names) { installed.store(names != nullptr ? names : &engine_names); }

}  // namespace rung
