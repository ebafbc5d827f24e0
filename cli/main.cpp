#include "commands.h"

int main(int argc, char** argv) {
  auto program = rung::cli::start_rung_program();
  CLI::App& app = *program;
  rung::cli::add_engine_commands(app);
  rung::cli::add_bench_command(app);
  rung::cli::add_parity_command(app);
  rung::cli::add_quantise_command(app, argc, argv);
  rung::cli::add_upgrade_command(app);
  rung::cli::add_conform_command(app);
  rung::cli::add_registry_command(app);
  rung::cli::add_variants_command(app);
  return rung::cli::run_command_line(app, argc, argv);
}
