#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "commands.h"
#include "rung/termination.h"

int main(int argc, char** argv) {
  rung::end_cleanly_on_termination_signals();
  CLI::App app{"rung: puts each ONNX model on the fastest execution provider that really works on this device"};
  app.require_subcommand(1);
  rung::cli::add_doctor_command(app);
  rung::cli::add_probe_command(app);
  rung::cli::add_prepare_command(app);
  rung::cli::add_bench_command(app);
  rung::cli::add_parity_command(app);
  rung::cli::add_quantise_command(app, argc, argv);
  rung::cli::add_upgrade_command(app);
  rung::cli::add_conform_command(app);
  rung::cli::add_registry_command(app);
  rung::cli::add_variants_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : rung::cli::kExitUsage;
  } catch (const rung::cli::CliError& e) {
    fmt::print(stderr, "rung: {}\n", e.what());
    return e.exit_code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rung: internal error: {}\n", e.what());
    return rung::cli::kExitFailed;
  }
  return 0;
}
