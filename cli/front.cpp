// `rung`, the front: what every launch of the command pays for. A warm
// `rung probe` (its cache holds) is answered here; every other command, and a
// probe that must measure, runs in rung-full (main.cpp), which this process
// becomes, argv unchanged. The front links the probe's decision alone: no walk,
// no libonnx and no ONNX protobuf, whose loading was a third of a warm launch
// (docs/performance.md). Its link names neither library, so code that would
// reach them from here fails the build (cli/CMakeLists.txt).
#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "commands.h"
#include "rung/print.h"
#include "rung/rung_programs.h"
#include "rung/termination.h"

namespace {

char** g_argv = nullptr;

// This process becomes rung-full with the same arguments; returns only to say why it could not.
[[noreturn]] void become_full() {
  const std::filesystem::path full = rung::find_rung_program("rung-full");
  if (full.empty()) {
    rung::print(stderr, "rung: rung-full, which runs this command, is neither beside this program nor in the libexec/rung beside its bin/: build or install it (target rung_full)\n");
  } else {
    std::fflush(stdout);
    auto failed = rung::become_program(full, g_argv);
    rung::print(stderr, "rung: {}\n", failed.error().message);
  }
  rung::cli::exit_with(rung::cli::kExitFailed);
}

// Help is rung-full's (it knows every command); so are parse errors, said in its words.
bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "-h" || a == "--help" || a == "--help-all") return true;
  }
  return false;
}

// The front's probe decision: the cache's answer, else this process becomes rung-full.
rung::Result<rung::ProbeOutcome> decide_from_cache(const rung::ProbeOptions& options) {
  // The notes are held until the cache answers: on a miss rung-full says them itself.
  std::vector<std::string> said;
  rung::ProbeOptions warm = options;
  warm.on_log = [&said](const std::string& line) { said.push_back(line); };
  warm.open_vouched_build = false;  // the answer is printed, nothing runs on the build
  auto cached = rung::probe_from_cache(warm);
  if (!cached) return cached.error();
  if (!*cached) become_full();
  if (options.on_log) {
    for (const auto& line : said) options.on_log(line);
  }
  return std::move(**cached);
}

}  // namespace

int main(int argc, char** argv) {
  g_argv = argv;
  if (argc < 2 || std::string_view(argv[1]) != "probe" || asks_for_help(argc, argv)) become_full();
  rung::cli::name_settings_by_flags();
  rung::keep_onnxruntime_telemetry_off_in_this_process();
  rung::end_cleanly_on_termination_signals();
  CLI::App app{"rung"};
  app.require_subcommand(1);
  rung::cli::add_probe_command(app, decide_from_cache);
  return rung::cli::run_command_line(app, argc, argv, become_full);
}
