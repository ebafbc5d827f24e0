#include "os/worker_location.h"

#include <cstdlib>

namespace rung {
namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

fs::path find_worker(const fs::path& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("RUNG_PROBE_WORKER"); env != nullptr && *env) return env;
  return find_rung_program("rung-probe-worker");
}

fs::path find_rung_program(const std::string& name) {
  const fs::path beside = executable_dir();
  std::error_code ec;
  for (const fs::path& p : {beside.empty() ? fs::path() : beside / name,
                            beside.empty() ? fs::path() : beside / RUNG_LIBEXEC_FROM_BINDIR / name,
                            fs::path(RUNG_INSTALL_LIBEXECDIR) / name}) {
    if (!p.empty() && fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

}  // namespace rung
