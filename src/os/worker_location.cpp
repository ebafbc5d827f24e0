#include "os/worker_location.h"

#include <fmt/format.h>

#include <cstdlib>

#include "os/environment.h"
#include "os/library_files.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;

fs::path find_worker(const fs::path& configured, bool read_environment) {
  if (!configured.empty()) return configured;
  if (auto env = rung_variable("RUNG_PROBE_WORKER", read_environment)) return path_from_utf8(*env);
  return find_rung_program("rung-probe-worker");
}

fs::path find_engine_worker(const fs::path& configured, bool read_environment, std::vector<std::string>* looked) {
  std::vector<std::pair<std::string, fs::path>> places;
  if (!configured.empty()) places.emplace_back("the worker option", configured);
  if (auto env = rung_variable("RUNG_PROBE_WORKER", read_environment)) places.emplace_back("RUNG_PROBE_WORKER", path_from_utf8(*env));
  const fs::path file = path_from_utf8(program_file_name("rung-probe-worker"));
  if (const fs::path dir = module_dir(); !dir.empty()) {
    places.emplace_back("beside the engine library", dir / file);
    // An installed kit, wherever it was moved: lib/ (the engine library) or bin/ (rung's programs) beside libexec/rung/.
    places.emplace_back("the kit's libexec, from its library directory", dir / RUNG_LIBEXEC_FROM_LIBDIR / file);
    places.emplace_back("the kit's libexec, from its program directory", dir / RUNG_LIBEXEC_FROM_BINDIR / file);
  }
  for (const auto& [what, p] : places) {
    std::error_code ec;
    if (looked != nullptr) looked->push_back(fmt::format("{} ({})", p.string(), what));
    if (fs::is_regular_file(p, ec)) return p.lexically_normal();
    if (what == "the worker option") break;  // named by the application: it alone counts
  }
  return {};
}

fs::path find_rung_program(const std::string& name) {
  const fs::path beside = executable_dir();
  const fs::path file = path_from_utf8(program_file_name(name));
  std::error_code ec;
  if (beside.empty()) return {};
  for (const fs::path& p : {beside / file, (beside / RUNG_LIBEXEC_FROM_BINDIR / file).lexically_normal()}) {
    if (fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

}  // namespace rung
