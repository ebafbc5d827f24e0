// The CLI's subcommands. Each registers itself on the app; exceptions are
// allowed only here in the CLI and are mapped to exit codes by main().
#pragma once

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

#include "rung/result.h"

namespace rung::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,     // the command ran and its answer is "no" (a gate failed, a rung failed)
  kExitUsage = 2,      // bad arguments or bad input files
  kExitNoRuntime = 3,  // no usable ONNX Runtime build
};

// Thrown by a command to end with a message and an exit code.
struct CliError : std::runtime_error {
  CliError(int code, const std::string& message) : std::runtime_error(message), exit_code(code) {}
  int exit_code;
};

// A library error's exit code: a usage or input problem is 2, a missing ONNX
// Runtime build 3, anything else (a side or rung that could not run) 1.
int exit_code_for(rung::ErrorCode code);

// The command line as typed ("rung bench m.onnx --runs 5"), for a record's provenance.
std::string command_line();

// --software-gpu: lend Mesa's lavapipe (software Vulkan) to the command's child
// processes, so that the WebGPU rung runs there (RUNG_SOFTWARE_GPU=1 does the same).
void add_software_gpu_flag(CLI::App& cmd, bool& flag);
// Lends it when the flag or the environment asks; a usage error when it is not there.
void lend_software_gpu_if_asked_or_throw(bool flag);

void add_doctor_command(CLI::App& app);
void add_probe_command(CLI::App& app);
void add_prepare_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_parity_command(CLI::App& app);
void add_conform_command(CLI::App& app);

}  // namespace rung::cli
