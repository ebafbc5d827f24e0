#include "os/worker_location.h"

#include <cstdlib>

#include "os/library_files.h"

namespace rung {
namespace fs = std::filesystem;

fs::path find_worker(const fs::path& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("RUNG_PROBE_WORKER"); env != nullptr && *env) return env;
  return find_rung_program("rung-probe-worker");
}

fs::path find_rung_program(const std::string& name) {
  const fs::path beside = executable_dir();
  const std::string file = program_file_name(name);
  std::error_code ec;
  for (const fs::path& p : {beside.empty() ? fs::path() : beside / file,
                            beside.empty() ? fs::path() : beside / RUNG_LIBEXEC_FROM_BINDIR / file,
                            fs::path(RUNG_INSTALL_LIBEXECDIR) / file}) {
    if (!p.empty() && fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

}  // namespace rung
