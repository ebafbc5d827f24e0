// Windows: the machine as the system names it, in the kernel's words Linux uses
// ("x86_64", "aarch64") so records from both compare; the release from ntdll
// (GetVersionEx answers what the program's manifest claims, not the system).
#include "os/machine.h"

#include <fmt/format.h>
#include <windows.h>

namespace rung {
namespace {

const char* name_of_machine(USHORT machine) {
  switch (machine) {
    case IMAGE_FILE_MACHINE_AMD64: return "x86_64";
    case IMAGE_FILE_MACHINE_ARM64: return "aarch64";
    case IMAGE_FILE_MACHINE_I386: return "i686";
    default: return "unknown";
  }
}

}  // namespace

std::string machine_architecture() {
  // The machine under any emulation (an x86-64 program on Windows on ARM): IsWow64Process2 where the system has it.
  using IsWow64Process2Fn = BOOL(WINAPI*)(HANDLE, USHORT*, USHORT*);
  if (HMODULE kernel = GetModuleHandleW(L"kernel32.dll")) {
    if (auto query = reinterpret_cast<IsWow64Process2Fn>(reinterpret_cast<void*>(GetProcAddress(kernel, "IsWow64Process2")))) {
      USHORT process = 0, native = 0;
      if (query(GetCurrentProcess(), &process, &native) && native != 0) return name_of_machine(native);
    }
  }
  SYSTEM_INFO info{};
  GetNativeSystemInfo(&info);
  switch (info.wProcessorArchitecture) {
    case PROCESSOR_ARCHITECTURE_AMD64: return "x86_64";
    case PROCESSOR_ARCHITECTURE_ARM64: return "aarch64";
    case PROCESSOR_ARCHITECTURE_INTEL: return "i686";
    default: return "unknown";
  }
}

std::string system_description() {
  struct Version {
    ULONG size, major, minor, build, platform;
    WCHAR service_pack[128];
  } v{};
  v.size = sizeof v;
  using RtlGetVersionFn = LONG(WINAPI*)(Version*);
  if (HMODULE ntdll = GetModuleHandleW(L"ntdll.dll")) {
    if (auto get = reinterpret_cast<RtlGetVersionFn>(reinterpret_cast<void*>(GetProcAddress(ntdll, "RtlGetVersion"))); get && get(&v) == 0) {
      return fmt::format("Windows {}.{}.{} {}", v.major, v.minor, v.build, machine_architecture());
    }
  }
  return fmt::format("Windows {}", machine_architecture());
}

const char* built_for_system() { return "windows"; }

std::uint64_t physical_memory_mib() {
  MEMORYSTATUSEX status{};
  status.dwLength = sizeof status;
  if (!GlobalMemoryStatusEx(&status)) return 0;
  return static_cast<std::uint64_t>(status.ullTotalPhys) >> 20;
}

std::string device_node(const std::string& name) { return "\\\\.\\" + name; }

}  // namespace rung
