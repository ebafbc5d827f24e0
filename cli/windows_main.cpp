// rung.exe on Windows: doctor, probe and prepare, in one program. Linux splits a
// small front from rung-full and hands a command on by exec (cli/front.cpp);
// Windows has no exec, and the tools beside these three stay Linux's for now
// (docs/windows.md).
#include "commands.h"
#include "os/windows/text.h"

// wmain (linked with -municode): the arguments in UTF-16, made UTF-8 once here.
int wmain(int argc, wchar_t** wide_argv) {
  rung::Utf8Arguments args(argc, wide_argv);
  auto program = rung::cli::start_rung_program();
  CLI::App& app = *program;
  rung::cli::add_engine_commands(app);
  for (const char* name : rung::cli::kToolCommandNames) {
    rung::cli::add_command_not_ported_here(app, name, "run it with Linux's rung (docs/windows.md)");
  }
  return rung::cli::run_command_line(app, args.argc(), args.argv());
}
