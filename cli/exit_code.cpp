#include <fmt/format.h>

#include <exception>

#include "commands.h"

namespace rung::cli {

// One mapping for the command line and the C ABI (rung/result.h).
int exit_code_for(ErrorCode code) { return exit_code_of(code); }

static_assert(exit_code_of(ErrorCode::kInvalidArgument) == kExitUsage && exit_code_of(ErrorCode::kNoRuntime) == kExitNoRuntime &&
              exit_code_of(ErrorCode::kRuntime) == kExitFailed);

int run_command_line(CLI::App& app, int argc, char** argv, void (*on_parse_error)()) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (on_parse_error != nullptr) on_parse_error();
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  } catch (const CliError& e) {
    fmt::print(stderr, "rung: {}\n", e.what());
    return e.exit_code;
  } catch (const LibraryUnavailable& e) {
    fmt::print(stderr, "rung: {}\n", e.what());
    return kExitFailed;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rung: internal error: {}\n", e.what());
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace rung::cli
