#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <string>
#include <system_error>

#include "commands.h"
#include "parse_error.h"
#include "rung/print.h"

namespace rung::cli {

// One mapping for the command line and the C ABI (rung/result.h).
int exit_code_for(ErrorCode code) { return exit_code_of(code); }

static_assert(exit_code_of(ErrorCode::kInvalidArgument) == kExitUsage && exit_code_of(ErrorCode::kNoRuntime) == kExitNoRuntime &&
              exit_code_of(ErrorCode::kRuntime) == kExitFailed);

namespace {

// What a command printed reached its reader, or the run failed: a full disk or a
// closed file behind stdout is a lost result, never exit 0. Said on stderr where
// stderr itself can still be written; a stderr that cannot be is a failure too.
// A line on stderr that cannot throw: fmt::print does when the write fails (a full
// disk behind 2>), and a throw from here would end the process in std::terminate.
void say(const std::string& line) noexcept {
  try {
    rung::print(stderr, "rung: {}\n", line);
  } catch (...) {
  }
}

// Why a write failed during the command, where fmt said (its exception carries errno).
std::error_code g_failed_write;

int with_streams_checked(int code) {
  errno = 0;
  const bool out_lost = std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  const std::error_code why = errno != 0 ? std::error_code(errno, std::generic_category()) : g_failed_write;
  if (out_lost) {
    say(fmt::format("the output could not be written to standard output{}{}", why ? ": " : "", why ? why.message() : ""));
  }
  const bool err_lost = std::fflush(stderr) != 0 || std::ferror(stderr) != 0;
  return (out_lost || err_lost) && code == kExitOk ? kExitFailed : code;
}

int run_parsed(CLI::App& app, int argc, char** argv, void (*on_parse_error)()) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (on_parse_error != nullptr) on_parse_error();
    if (auto unknown = unknown_command_message(app, argc, argv)) {
      say(*unknown);
      return kExitUsage;
    }
    int code = print_parse_error(app, e);
    return code == 0 ? 0 : kExitUsage;
  } catch (const CliError& e) {
    say(e.what());
    return e.exit_code;
  } catch (const LibraryUnavailable& e) {
    say(e.what());
    return kExitFailed;
  } catch (const std::system_error& e) {
    // fmt::print's failed write: standard output or error is gone (a full disk, a closed file).
    if (std::ferror(stdout) != 0 || std::ferror(stderr) != 0) {
      g_failed_write = e.code();
      return kExitFailed;
    }
    say(fmt::format("internal error: {}", e.what()));
    return kExitFailed;
  } catch (const std::exception& e) {
    say(fmt::format("internal error: {}", e.what()));
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

namespace {

// Set when the command's answer is known: an exit() before then came from a library loaded into this process (a
// provider's plugin, ONNX Runtime), which chose a status for a command it knows nothing of — exit(0) would say
// the run succeeded with no result written. rung's handler, last registered so first run, keeps the status honest.
std::atomic<bool> g_answer_known{false};

void refuse_a_foreign_exit() {
  if (g_answer_known.load()) return;
  say("the command was ended before it finished by exit() from a library loaded into this process (an "
      "execution provider or ONNX Runtime); nothing it was computing was written. Run it again without "
      "--in-process to keep that library in a worker process");
  std::fflush(stdout);
  std::_Exit(kExitFailed);
}

}  // namespace

int run_command_line(CLI::App& app, int argc, char** argv, void (*on_parse_error)()) {
  static const int registered = std::atexit(refuse_a_foreign_exit);
  (void)registered;
  const int code = with_streams_checked(run_parsed(app, argc, argv, on_parse_error));
  g_answer_known = true;
  return code;
}

[[noreturn]] void exit_with(int code) {
  g_answer_known = true;
  std::exit(code);
}

void add_command_not_ported_here(CLI::App& app, const std::string& name, const std::string& where) {
  auto* cmd = app.add_subcommand(name, fmt::format("Not ported here yet: {}", where));
  cmd->allow_extras();
  cmd->set_help_flag();  // `rung NAME --help` is the same answer, not the program's help
  cmd->callback([name, where] { throw CliError(kExitUsage, fmt::format("rung {} is not ported to this system yet: {}", name, where)); });
}

}  // namespace rung::cli
