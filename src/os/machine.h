// The machine this process runs on, as the kernel names it: what a record of a
// run carries so that a run on ARM is told from one on x86-64 (under emulation
// too: qemu-user answers as the machine it emulates).
#pragma once

#include <cstdint>
#include <string>

namespace rung {

// "x86_64", "aarch64"; "unknown" when the kernel does not say.
std::string machine_architecture();
// "Linux 6.18.44 aarch64": the system, its release and the machine.
std::string system_description();
// The machine's physical memory in MiB; 0 when the system does not say.
std::uint64_t physical_memory_mib();
// How the system names the device node `name` ("nvidia0" -> "/dev/nvidia0"; "\\\\.\\nvidia0" on Windows).
std::string device_node(const std::string& name);
// The operating system this program was built for: "linux", "macos" or "windows"
// (Android is told from files, not from the build: its binaries are Linux's).
const char* built_for_system();

}  // namespace rung
