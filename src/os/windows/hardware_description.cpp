// Windows: the adapters DXGI lists (IDXGIFactory1::EnumAdapters1), the processor's
// cores and efficiency classes (GetLogicalProcessorInformationEx) and its name and
// features (CPUID), as the JSON a windows.json fixture holds.
#include "os/hardware_description.h"

#include <dxgi.h>
#include <fmt/format.h>
#include <windows.h>

#include <bitset>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "rung/json_text.h"
#include "os/windows/text.h"

namespace rung {
namespace {

void describe_adapters(nlohmann::json& out) {
  out["dxgi_adapters"] = nlohmann::json::array();
  IDXGIFactory1* factory = nullptr;
  const HRESULT made = CreateDXGIFactory1(IID_IDXGIFactory1, reinterpret_cast<void**>(&factory));
  if (FAILED(made) || factory == nullptr) {
    out["dxgi_problem"] = fmt::format("CreateDXGIFactory1 failed (HRESULT 0x{:08x})", static_cast<unsigned>(made));
    return;
  }
  IDXGIAdapter1* adapter = nullptr;
  for (UINT i = 0; i < 64 && factory->EnumAdapters1(i, &adapter) != DXGI_ERROR_NOT_FOUND; ++i) {
    DXGI_ADAPTER_DESC1 d{};
    if (adapter != nullptr && SUCCEEDED(adapter->GetDesc1(&d))) {
      out["dxgi_adapters"].push_back({{"name", utf8_of(d.Description)},
                                      {"vendor_id", fmt::format("{:04x}", d.VendorId & 0xffff)},
                                      {"device_id", fmt::format("{:04x}", d.DeviceId & 0xffff)},
                                      {"dedicated_memory_mb", static_cast<std::uint64_t>(d.DedicatedVideoMemory) >> 20},
                                      {"software", (d.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0}});
    }
    if (adapter != nullptr) adapter->Release();
    adapter = nullptr;
  }
  factory->Release();
}

// Cores, logical processors and the cores of each efficiency class, from the processor records.
void describe_cores(nlohmann::json& cpu) {
  DWORD bytes = 0;
  GetLogicalProcessorInformationEx(RelationProcessorCore, nullptr, &bytes);
  std::vector<unsigned char> buffer(bytes);
  if (bytes == 0 || !GetLogicalProcessorInformationEx(RelationProcessorCore, reinterpret_cast<SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data()), &bytes)) {
    return;
  }
  int cores = 0, logical = 0;
  std::map<int, int> by_class;
  for (DWORD at = 0; at < bytes;) {
    const auto* info = reinterpret_cast<const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data() + at);
    if (info->Size == 0) break;
    if (info->Relationship == RelationProcessorCore) {
      ++cores;
      // EfficiencyClass is the byte after Flags: Windows 10's headers name it, mingw-w64 10's
      // still call it Reserved[0]. Higher is faster; every core is 0 on a uniform CPU.
      ++by_class[reinterpret_cast<const BYTE*>(&info->Processor)[1]];
      for (WORD g = 0; g < info->Processor.GroupCount; ++g) logical += static_cast<int>(std::bitset<64>(info->Processor.GroupMask[g].Mask).count());
    }
    at += info->Size;
  }
  if (cores > 0) cpu["cores"] = cores;
  if (logical > 0) cpu["logical_processors"] = logical;
  if (by_class.size() >= 2) {
    for (const auto& [klass, n] : by_class) cpu["cores_by_efficiency_class"][std::to_string(klass)] = n;
  }
}

#if defined(__x86_64__) || defined(__i386__)
// The name and the features rung's quantised-speed line and the CPU kernels care about,
// spelled as Linux's /proc/cpuinfo spells them.
void describe_x86(nlohmann::json& cpu) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  std::string name;
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
    for (unsigned leaf = 0x80000002; leaf <= 0x80000004; ++leaf) {
      unsigned r[4] = {};
      __get_cpuid(leaf, &r[0], &r[1], &r[2], &r[3]);
      name.append(reinterpret_cast<const char*>(r), sizeof r);
    }
  }
  name = name.c_str();  // to the first NUL
  while (!name.empty() && name.back() == ' ') name.pop_back();
  while (!name.empty() && name.front() == ' ') name.erase(name.begin());
  if (!name.empty()) cpu["name"] = name;
  std::vector<std::string> features;
  // A feature counts only when the system saves its registers on a switch (XCR0), as
  // Linux's flags do: the CPU may have AVX-512 that the system leaves off.
  std::uint64_t saved = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    if (c & (1u << 27)) {  // OSXSAVE: XGETBV may be asked
      unsigned lo = 0, hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      saved = (std::uint64_t{hi} << 32) | lo;
    }
    const bool ymm = (saved & 0x6) == 0x6;
    if (c & (1u << 20)) features.emplace_back("sse4_2");
    if ((c & (1u << 12)) && ymm) features.emplace_back("fma");
    if ((c & (1u << 28)) && ymm) features.emplace_back("avx");
  }
  const bool ymm = (saved & 0x6) == 0x6, zmm = (saved & 0xe6) == 0xe6, tiles = (saved & (3ull << 17)) == (3ull << 17);
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if ((b & (1u << 5)) && ymm) features.emplace_back("avx2");
    if ((b & (1u << 16)) && zmm) features.emplace_back("avx512f");
    if ((c & (1u << 11)) && zmm) features.emplace_back("avx512_vnni");
    if ((d & (1u << 25)) && tiles) features.emplace_back("amx_int8");
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) && ymm) features.emplace_back("avx_vnni");
  cpu["features"] = features;
}
#endif

}  // namespace

std::optional<std::string> native_hardware_description() {
  nlohmann::json out;
  describe_adapters(out);
  nlohmann::json cpu = nlohmann::json::object();
  describe_cores(cpu);
#if defined(__x86_64__) || defined(__i386__)
  describe_x86(cpu);
#endif
  out["cpu"] = cpu;
  return json_text(out, 2);
}

}  // namespace rung
