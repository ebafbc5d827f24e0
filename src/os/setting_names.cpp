#include "rung/setting_names.h"

#include <atomic>

namespace rung {
namespace {

// An embedded engine's: the C ABI's keys where it has one (a key family's NAME
// made the model's), else nothing to advise.
std::string engine_names(Setting setting, std::string_view model) {
  if (setting == Setting::kShape) return "shape";  // an input spec's "shape" field
  std::string key(setting_option_key(setting));
  if (key.empty()) return {};
  if (const auto name = key.find("NAME"); name != std::string::npos) key.replace(name, 4, model);
  return "the option " + key;
}

std::atomic<SettingNames> installed{&engine_names};

}  // namespace

std::string_view setting_option_key(Setting setting) {
  switch (setting) {
    case Setting::kInputSpec: return "model.NAME.input_spec";
    case Setting::kProbeDeadline: return "probe_deadline_ms";
    case Setting::kShape:
    case Setting::kAllowWritableRuntime:
    case Setting::kAllowWritablePlugin:
    case Setting::kMaxTensorMb: return {};
  }
  return {};
}

std::string setting_name(Setting setting, std::string_view model) { return installed.load()(setting, model); }

void use_setting_names(SettingNames names) { installed.store(names != nullptr ? names : &engine_names); }

}  // namespace rung
