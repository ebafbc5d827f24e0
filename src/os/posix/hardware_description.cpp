#include "os/hardware_description.h"

namespace rung {

// Linux and Android describe their hardware in files (sysfs, procfs, /dev): read under a root.
std::optional<std::string> native_hardware_description() { return std::nullopt; }

}  // namespace rung
