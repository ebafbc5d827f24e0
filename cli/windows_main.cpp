// rung.exe on Windows: doctor, probe and prepare, in one program. Linux splits a
// small front from rung-full and hands a command on by exec (cli/front.cpp);
// Windows has no exec, and the tools beside these three stay Linux's for now
// (docs/windows.md).
#include "commands.h"
#include "rung/runtime.h"

namespace rung::cli {
Result<ProbeOutcome> probe_decision(const ProbeOptions& options) { return run_probe(options); }
}  // namespace rung::cli

int main(int argc, char** argv) {
  auto program = rung::cli::start_rung_program();
  CLI::App& app = *program;
  rung::cli::add_engine_commands(app);
  return rung::cli::run_command_line(app, argc, argv);
}
