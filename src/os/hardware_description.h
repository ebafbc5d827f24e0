// The hardware of a system whose facts are not files: on Windows, the same JSON
// a windows.json fixture holds (its DXGI adapters and its CPU; core/hardware.cpp
// reads both the one way), made from the system's own calls. nullopt where the
// facts are files under a root (Linux, Android), which core/hardware.cpp reads.
#pragma once

#include <optional>
#include <string>

namespace rung {

std::optional<std::string> native_hardware_description();

}  // namespace rung
