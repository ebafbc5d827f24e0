// The CLI's subcommands. Each registers itself on the app; exceptions are
// allowed only here in the CLI and are mapped to exit codes by main().
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <stdexcept>
#include <string>

#include "rung/probe.h"
#include "rung/result.h"

namespace rung::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,     // the command ran and its answer is "no" (a gate failed, a rung failed)
  kExitUsage = 2,      // bad arguments or bad input files
  kExitNoRuntime = 3,  // no usable ONNX Runtime build
};

// The one mapping from a library error to an exit code, for every command.
int exit_code_for(ErrorCode code);

// Thrown by a command to end with a message and an exit code.
struct CliError : std::runtime_error {
  CliError(int code, const std::string& message) : std::runtime_error(message), exit_code(code) {}
  // A library error, ended with its class's exit code.
  explicit CliError(const Error& error) : CliError(exit_code_for(error.code), error.message) {}
  int exit_code;
};

// Parses and runs the command line, each exception mapped to its message and exit
// code: the one top level both programs share. `on_parse_error`, when set, is
// called first on a parse error (the front hands the arguments to rung-full).
int run_command_line(CLI::App& app, int argc, char** argv, void (*on_parse_error)() = nullptr);
// Ends the process with `code` from inside a command: the one way rung itself quits early. Any other exit()
// before run_command_line returns (a provider's plugin calling exit(0)) is exit 1 with a message.
[[noreturn]] void exit_with(int code);

// The command line as typed ("rung bench m.onnx --runs 5"), for a record's provenance.
std::string command_line();

// How `rung probe` reaches its decision: run_probe in a full program; in the
// front (front.cpp) the cache's answer, else that process becomes rung-full.
using ProbeDecision = Result<ProbeOutcome> (*)(const ProbeOptions& options);

// The App every full rung program starts from (cli/program.cpp): telemetry off,
// termination signals handled, --version listing the ONNX Runtime builds found.
// Messages made by the engine's code name the command line's flags (rung/setting_names.h).
void name_settings_by_flags();
std::unique_ptr<CLI::App> start_rung_program();

void add_doctor_command(CLI::App& app);
void add_probe_command(CLI::App& app, ProbeDecision decide);
void add_prepare_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_compare_command(CLI::App& bench);  // `rung bench compare A B`, a subcommand of bench
void add_parity_command(CLI::App& app);
void add_quantise_command(CLI::App& app, int argc, char** argv);  // argv: recorded in the report
void add_upgrade_command(CLI::App& app);
void add_conform_command(CLI::App& app);
void add_registry_command(CLI::App& app);
void add_variants_command(CLI::App& app);

// The commands Linux's rung-full carries beside the engine's three (cli/main.cpp).
// rung.exe knows each by name and says it is not ported yet (exit 2), rather than
// "A subcommand is required" or the top-level help (tests/windows-cli-test.py
// holds the list to Linux's own --help).
inline constexpr const char* kToolCommandNames[] = {"bench", "parity", "quantise", "upgrade", "conform", "registry", "variants"};

// A command this program knows by name and does not run: `rung NAME ...`, with
// any arguments, --help included, is exit 2 saying where it runs.
void add_command_not_ported_here(CLI::App& app, const std::string& name, const std::string& where);

// doctor, probe and prepare: what every full program carries (Linux's rung-full,
// rung.exe). Inline: the front links the shared objects without these commands.
inline void add_engine_commands(CLI::App& app) {
  add_doctor_command(app);
  add_probe_command(app, run_probe);
  add_prepare_command(app);
}

}  // namespace rung::cli
