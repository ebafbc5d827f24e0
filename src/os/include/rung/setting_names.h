// How the front that runs this code names the settings its messages advise:
// the command line's flags ("--max-tensor-mb") in rung's programs, the C ABI's
// keys or nothing in an embedded engine. A message says "raise it with X" only
// when its front offers an X, so an application is never told of a flag it
// cannot pass (ctest abi.engine_names_no_command_line_flag reads the library).
// Kept in src/os/setting_names.cpp, below every concept: a limit's message is made
// as low as src/os/. The CLI installs its flags (cli/program.cpp).
#pragma once

#include <string>
#include <string_view>

namespace rung {

enum class Setting {
  kAllowWritableRuntime,  // load an ONNX Runtime build others can write to
  kAllowWritablePlugin,   // the same for a plugin EP library or its directory
  kMaxTensorMb,           // the limit on one tensor (and on a tensor or image file)
  kShape,                 // an input's shape given as text ("x=1x3x640x640")
  kInputSpec,             // a model's input spec file (`model` names the model)
  kProbeDeadline,         // the time one rung's probe may take
};

// The C ABI's option key for the setting, "" where the engine has none: a row of
// rung/option_table.h (OptionTableTest holds it), whose faces name it: the
// engine says "the option KEY", the command line its flag for KEY (cli/knob_flags.h).
std::string_view setting_option_key(Setting setting);

// The name under this process's front; "" when it offers no such setting.
std::string setting_name(Setting setting, std::string_view model = {});

// A front's names, installed once at its start, before any engine work.
using SettingNames = std::string (*)(Setting setting, std::string_view model);
void use_setting_names(SettingNames names);

}  // namespace rung
